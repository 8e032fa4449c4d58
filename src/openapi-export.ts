import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './config/app-config';
import { createApp, DOCS_PATH } from './setup-app';

const TARGET = join(__dirname, '..', 'openapi.yaml');

/** `npm run openapi:export`: the document the app serves, under the default configuration, to openapi.yaml. */
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
  console.log(`Wrote ${TARGET}`);
}

exportOpenApi().catch((error: unknown) => {
  console.error(`openapi:export failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
