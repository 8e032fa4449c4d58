import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** The server the PostgreSQL tests use when TEST_DATABASE_URL is not set (as .ci/run starts it). */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Set by `createTestDatabase` for the test workers: the run's database, or why there is none. */
const FOUND = 'PETSTORE_TEST_POSTGRES_URL';
const MISSING = 'PETSTORE_TEST_POSTGRES_MISSING';
/** The server URL it was created through, for `dropTestDatabase`. */
const SERVER = 'PETSTORE_TEST_POSTGRES_SERVER';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

const withoutPassword = (url: string): string => {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
};

async function onServer<T>(server: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: server, connectionTimeoutMillis: 3000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Run once per test run (test/support/global-setup.ts): on the server of TEST_DATABASE_URL when
 * set, else on the default server if it answers within 3 seconds, a database of this run's own
 * (`petstore_test_<pid>_<random>`), the only one its tests use; `dropTestDatabase` drops it at the
 * end, and so does an interrupt. The database named in the URL is only connected to, to create it.
 */
export async function createTestDatabase(): Promise<void> {
  const server = process.env.TEST_DATABASE_URL || DEFAULT_POSTGRES_URL;
  const name = `petstore_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  try {
    await onServer(server, (client) => client.query(`CREATE DATABASE "${name}"`));
  } catch (error) {
    const reason = `cannot create a database at ${withoutPassword(server)}: ${(error as Error).message}`;
    if (process.env.TEST_DATABASE_URL) throw new Error(`TEST_DATABASE_URL: ${reason}`);
    process.env[MISSING] = reason;
    return;
  }
  const url = new URL(server);
  url.pathname = `/${name}`;
  process.env[FOUND] = url.toString();
  process.env[SERVER] = server;
  for (const signal of SIGNALS) process.once(signal, dropAndExit);
}

/** Drops this run's database (run by test/support/global-teardown.ts). */
export async function dropTestDatabase(): Promise<void> {
  for (const signal of SIGNALS) process.removeListener(signal, dropAndExit);
  const url = process.env[FOUND];
  const server = process.env[SERVER];
  if (!url || !server) return;
  const name = new URL(url).pathname.slice(1);
  // FORCE: connections a failed or interrupted test left open do not keep it.
  await onServer(server, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  delete process.env[FOUND];
}

function dropAndExit(signal: (typeof SIGNALS)[number]): void {
  void dropTestDatabase()
    .catch((error: unknown) => console.error(`could not drop the test database: ${(error as Error).message}`))
    .finally(() => process.exit(EXIT_CODES[signal]));
}

/** This run's PostgreSQL database, if it has one. */
export function postgresUrl(): string | undefined {
  return process.env[FOUND] || undefined;
}

/** Under TEST_DATABASE_URL, this run's database on that server, where the whole e2e suite runs. */
export function suiteDatabaseUrl(): string | undefined {
  if (!process.env.TEST_DATABASE_URL) return undefined;
  const url = postgresUrl();
  if (!url) throw new Error('TEST_DATABASE_URL is set, but test/support/global-setup.ts made no database');
  return url;
}

let reported = false;

/**
 * `describe` when this run has a PostgreSQL database, else `describe.skip` and one line (once per
 * file) saying why; under CI a missing server is a failure, not a skip. `npm run test:quick`,
 * which looks for no server, skips these without a word.
 */
export function describeOnPostgres(what: string): jest.Describe {
  if (postgresUrl()) return describe;
  if (reported || process.env.TEST_QUICK) return describe.skip;
  reported = true;
  const reason =
    `no PostgreSQL (${process.env[MISSING] ?? 'not looked for'}): ` +
    `start it at ${DEFAULT_POSTGRES_URL} or set TEST_DATABASE_URL`;
  if (process.env.CI) {
    it(`${what} need PostgreSQL`, () => {
      throw new Error(reason);
    });
  } else {
    console.warn(`Skipping ${what}: ${reason}`);
  }
  return describe.skip;
}
