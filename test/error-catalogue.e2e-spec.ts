import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, errorCatalogueTable, ErrorCode, errorCodes } from '../src/common/errors/error-codes';
import { FEATURES } from '../src/features';
import { withErrorTable } from '../src/cli/openapi-export';
import { committedDocument } from './support/openapi';

/**
 * The one catalogue (the service's codes and every module's, loaded through FEATURES) is the error
 * table of every document that has one, and the `ErrorCode` enum of the committed openapi.yaml.
 */
const ROOT = join(__dirname, '..');
const HEADER = '| status | code | when |';

/** The rows of every `| status | code | when |` table in a Markdown text. */
function errorTables(markdown: string): string[][] {
  const lines = markdown.split('\n');
  const tables: string[][] = [];
  lines.forEach((line, index) => {
    if (line.trim() !== HEADER) return;
    const rows: string[] = [];
    for (let i = index + 2; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i].trim());
    tables.push(rows);
  });
  return tables;
}

/** Codes of the service that decisions.md does not list (it predates them). */
const NOT_IN_DECISIONS: ErrorCode[] = [
  'forbidden',
  'still_referenced',
  'precondition_failed',
  'precondition_required',
  'version_limit_reached',
];

describe('the error catalogue in the docs and the document', () => {
  const catalogueRows = errorCatalogueTable().split('\n').slice(2);

  it('holds every feature module', () => {
    expect(FEATURES.length).toBeGreaterThan(0);
  });

  it("has every code and status of decisions.md, and of the service's own nothing else but the codes named here", () => {
    const decisions = readFileSync(join(ROOT, 'docs', 'spec', 'decisions.md'), 'utf8');
    const [table] = errorTables(decisions);
    const decided = table.map((row) => {
      const [, status, code] = row.split('|').map((cell) => cell.trim());
      return `${status} ${code.replace(/`/g, '')}`;
    });
    const catalogued = (Object.keys(ERROR_CODES) as ErrorCode[])
      .filter((code) => !NOT_IN_DECISIONS.includes(code))
      .map((code) => `${ERROR_CODES[code].status} ${code}`);

    expect(decided.sort()).toEqual(catalogued.sort());
  });

  it('is the error table of every document that has one (README.md, docs/), as `openapi:export` writes it', () => {
    const docs = join(ROOT, 'docs');
    const files = [
      join(ROOT, 'README.md'),
      ...readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(docs, name)),
    ].filter((file) => existsSync(file));
    const tables = files.flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      expect(withErrorTable(text) === text || errorTables(text).length === 0).toBe(true);
      return errorTables(text).map((rows) => ({ file, rows }));
    });

    expect(tables.length).toBeGreaterThan(0);
    // A stale table (a module's codes added, the docs not exported): run `npm run openapi:export`.
    for (const { file, rows } of tables) expect({ file, rows }).toEqual({ file, rows: catalogueRows });
  });

  it('is the ErrorCode enum of the committed openapi.yaml', async () => {
    const document = await committedDocument();
    expect((document.components?.schemas?.ErrorCode as { enum: string[] }).enum).toEqual(errorCodes());
  });
});
