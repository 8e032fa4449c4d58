import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import type { App } from 'supertest/types';
import { loadConfig } from '../../src/config/app-config';
import { createApp, CreateAppOptions } from '../../src/app/setup-app';
import { postgresUrl, suiteDatabaseUrl } from './postgres';

export const TEST_KEY = 'test-key-0123456789abcdef';
export const AUTH = { Authorization: `Bearer ${TEST_KEY}` };

/**
 * With TEST_DATABASE_URL set (e.g. by .ci/run) to a PostgreSQL server, the e2e suite runs there
 * instead of on SQLite: this is then the database this run made on it (test/support/postgres.ts).
 */
export const TEST_DATABASE_URL = suiteDatabaseUrl();
const schemas: Array<{ url: string; schema: string }> = [];

/** A fresh schema in this PostgreSQL database for one test app, dropped after the file's tests. */
export function postgresSchemaEnv(url: string): Record<string, string> {
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  schemas.push({ url, schema });
  return { DATABASE_URL: url, DATABASE_SCHEMA: schema };
}

/**
 * A fresh schema in the PostgreSQL database of this run (on TEST_DATABASE_URL's server or the
 * default one, see test/support/postgres.ts), for the tests that need PostgreSQL itself.
 */
export function postgresTestEnv(): Record<string, string> {
  const url = postgresUrl();
  if (!url) throw new Error('this run has no PostgreSQL server (see describeOnPostgres)');
  return postgresSchemaEnv(url);
}

/**
 * The database of one test app: a fresh PostgreSQL schema when TEST_DATABASE_URL is set
 * (dropped after the file's tests), else SQLite at `sqlitePath` (in memory by default).
 */
export function testDatabaseEnv(sqlitePath = ':memory:'): Record<string, string> {
  return TEST_DATABASE_URL ? postgresSchemaEnv(TEST_DATABASE_URL) : { DATABASE_PATH: sqlitePath };
}

export async function dropTestSchemas(): Promise<void> {
  for (const url of new Set(schemas.map((entry) => entry.url))) {
    const mine = schemas.filter((entry) => entry.url === url);
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      for (const { schema } of mine) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
    for (const entry of mine) schemas.splice(schemas.indexOf(entry), 1);
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
  const database = env.DATABASE_PATH || env.DATABASE_URL ? {} : testDatabaseEnv();
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

/** The app of a describe block, and its HTTP server for supertest. */
export interface TestApp {
  readonly app: NestExpressApplication;
  readonly http: App;
}

/**
 * Starts the app (`startApp`) before the tests of the enclosing describe block and closes it
 * after them; `app` and `http` are read inside its tests and hooks. `env` may be a function,
 * called when the app starts (e.g. to name a file made by an earlier hook).
 */
export function useApp(
  env: Record<string, string> | (() => Record<string, string>) = {},
  options: CreateAppOptions = {},
): TestApp {
  let app: NestExpressApplication | undefined;
  beforeAll(async () => {
    app = await startApp(typeof env === 'function' ? env() : env, options);
  });
  afterAll(async () => {
    await app?.close();
  });
  const started = (): NestExpressApplication => {
    if (!app) throw new Error('the app has not started: use it inside a test or a hook');
    return app;
  };
  return {
    get app() {
      return started();
    },
    get http() {
      return started().getHttpServer() as App;
    },
  };
}

/** Starts the app, hands it to `use`, and closes it afterwards, also when `use` fails. */
export async function withApp<T>(
  env: Record<string, string>,
  use: (app: NestExpressApplication) => Promise<T>,
  options: CreateAppOptions = {},
): Promise<T> {
  const app = await startApp(env, options);
  try {
    return await use(app);
  } finally {
    await app.close();
  }
}

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
