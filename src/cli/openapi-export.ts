import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCatalogueTable } from '../common/errors/error-codes';
import { loadConfig } from '../config/app-config';
import { createApp, DOCS_PATH } from '../app/setup-app';

const TARGET = join(__dirname, '..', '..', 'openapi.yaml');
const ERROR_TABLE_DOCS = [join(__dirname, '..', '..', 'docs', 'api.md')];

/** `markdown` with its `| status | code | when |` table replaced by the catalogue's. */
export function withErrorTable(markdown: string): string {
  return markdown.replace(/^\| status \| code \| when \|\n(?:\|.*\n?)*/m, `${errorCatalogueTable()}\n`);
}

/** `npm run openapi:export`: the served document to openapi.yaml, the error catalogue to the docs' table. */
async function exportOpenApi(): Promise<void> {
  const app = await createApp(loadConfig({ DATABASE_PATH: ':memory:', LOG_LEVEL: 'warn' }));
  try {
    await app.listen(0, '127.0.0.1');
    const response = await fetch(`${await app.getUrl()}/${DOCS_PATH}-yaml`);
    if (!response.ok) throw new Error(`GET /${DOCS_PATH}-yaml answered ${response.status}`);
    writeFileSync(TARGET, await response.text());
  } finally {
    await app.close();
  }
  for (const doc of ERROR_TABLE_DOCS) writeFileSync(doc, withErrorTable(readFileSync(doc, 'utf8')));
  console.log(`Wrote ${TARGET} and the error table of ${ERROR_TABLE_DOCS.length} doc(s)`);
}

if (require.main === module)
  exportOpenApi().catch((error: unknown) => {
    console.error(`openapi:export failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
