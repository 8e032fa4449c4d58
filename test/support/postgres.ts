import { Client } from 'pg';

/** The server the PostgreSQL tests use when TEST_DATABASE_URL is not set (as .ci/run starts it). */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Set by `findPostgres` for the test workers: the server's URL, or why there is none. */
const FOUND = 'PETSTORE_TEST_POSTGRES_URL';
const MISSING = 'PETSTORE_TEST_POSTGRES_MISSING';

/**
 * Run once per test run (test/support/global-setup.ts): the server of TEST_DATABASE_URL when
 * set, else the default server if it answers. Only the tests that need PostgreSQL itself use
 * it; the rest of the suite runs on PostgreSQL only under TEST_DATABASE_URL.
 */
export async function findPostgres(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) {
    process.env[FOUND] = process.env.TEST_DATABASE_URL;
    return;
  }
  const client = new Client({ connectionString: DEFAULT_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    process.env[FOUND] = DEFAULT_POSTGRES_URL;
  } catch (error) {
    process.env[MISSING] = error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The PostgreSQL server of this run, if there is one. */
export function postgresUrl(): string | undefined {
  return process.env[FOUND] || undefined;
}

let reported = false;

/**
 * `describe` when this run has a PostgreSQL server, else `describe.skip` and one line (once per file)
 * saying why. Under CI a missing server is a failure, not a skip.
 */
export function describeOnPostgres(what: string): jest.Describe {
  if (postgresUrl()) return describe;
  if (reported) return describe.skip;
  reported = true;
  const reason =
    `no PostgreSQL at ${DEFAULT_POSTGRES_URL} (${process.env[MISSING] ?? 'not looked for'}): ` +
    'start it there or set TEST_DATABASE_URL';
  if (process.env.CI) {
    it(`${what} need PostgreSQL`, () => {
      throw new Error(reason);
    });
  } else {
    console.warn(`Skipping ${what}: ${reason}`);
  }
  return describe.skip;
}
