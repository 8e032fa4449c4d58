import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, errorCatalogueTable, ErrorCode } from './error-codes';

const ROOT = join(__dirname, '..', '..', '..');
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

const catalogueRows = errorCatalogueTable().split('\n').slice(2);

/** Codes the service can answer that decisions.md does not list yet. */
const NOT_IN_DECISIONS: ErrorCode[] = ['forbidden'];

describe('the error catalogue', () => {
  it('is a table with one row per code, in the order of the catalogue', () => {
    expect(catalogueRows).toHaveLength(Object.keys(ERROR_CODES).length);
    expect(catalogueRows[0]).toBe(
      '| 400 | `validation_failed` | body or parameters break a rule; `message` and `details` name each field |',
    );
  });

  it('has every code and status of decisions.md, and nothing else but the codes named here', () => {
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

  it('is the error table of every document that has one (README.md, docs/)', () => {
    const docs = join(ROOT, 'docs');
    const files = [
      join(ROOT, 'README.md'),
      ...readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(docs, name)),
    ].filter((file) => existsSync(file));
    const tables = files.flatMap((file) =>
      errorTables(readFileSync(file, 'utf8')).map((rows) => ({ file, rows })),
    );

    expect(tables.length).toBeGreaterThan(0);
    for (const { file, rows } of tables) expect({ file, rows }).toEqual({ file, rows: catalogueRows });
  });
});
