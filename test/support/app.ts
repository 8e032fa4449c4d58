import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import { loadConfig } from '../../src/config/app-config';
import { createApp, CreateAppOptions } from '../../src/setup-app';

export const TEST_KEY = 'test-key-0123456789abcdef';
export const AUTH = { Authorization: `Bearer ${TEST_KEY}` };

/** Set (e.g. by .ci/run) to run the e2e suite on a real PostgreSQL server instead of SQLite. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
const schemas: string[] = [];

/**
 * The database of one test app: a fresh PostgreSQL schema when TEST_DATABASE_URL is set
 * (dropped after the file's tests), else SQLite at `sqlitePath` (in memory by default).
 */
export function testDatabaseEnv(sqlitePath = ':memory:'): Record<string, string> {
  if (!TEST_DATABASE_URL) return { DATABASE_PATH: sqlitePath };
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema };
}

export async function dropTestSchemas(): Promise<void> {
  if (!TEST_DATABASE_URL || schemas.length === 0) return;
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Boots the real application, exactly as main.ts builds it (same config loader, same
 * createApp), on a fresh test database unless `env` names a SQLite DATABASE_PATH.
 * Logs are off (LOG_LEVEL=silent) unless the environment or the options ask for them.
 */
export async function startApp(
  env: Record<string, string> = {},
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  const database = env.DATABASE_PATH ? {} : testDatabaseEnv();
  // Rate limits are off unless a test turns them on: the suite sends thousands of requests.
  const config = loadConfig({
    API_KEYS: TEST_KEY,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_ENABLED: 'false',
    ...database,
    ...env,
  });
  const app = await createApp(config, options);
  await app.init();
  return app;
}

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
