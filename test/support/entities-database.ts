import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { loadConfig } from '../../src/config/app-config';
import { dataSourceOptions, openDatabase } from '../../src/database/database.options';

/**
 * Runs `use` on a fresh in-memory SQLite database whose tables are made from these entities
 * (synchronised, no migrations), and destroys it afterwards, also when `use` fails: for specs of
 * the database helpers on entities other than the service's own.
 */
export async function withEntitiesDatabase<T>(
  options: Pick<DataSourceOptions, 'entities' | 'subscribers'>,
  use: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const dataSource = new DataSource({
    type: 'better-sqlite3',
    database: ':memory:',
    synchronize: true,
    ...options,
  });
  await dataSource.initialize();
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/**
 * A database of these entities (synchronised, no migrations) opened as the service opens its own,
 * with its readers and its write path: a SQLite file, or a PostgreSQL schema of its own.
 */
export async function openEntitiesDatabase(
  entities: DataSourceOptions['entities'],
  env: Record<string, string>,
): Promise<DataSource> {
  const { database } = loadConfig(env);
  if (database.url !== null) {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${database.schema}"`).finally(() => client.end());
  }
  return openDatabase(database, { ...dataSourceOptions(database, []), entities, synchronize: true });
}

/** A fresh temporary folder for each test of the enclosing block (`dir()` inside a test or hook). */
export function withTempDir(specs: (dir: () => string) => void): void {
  let path: string | undefined;
  beforeEach(() => {
    path = mkdtempSync(join(tmpdir(), 'petstore-spec-'));
  });
  afterEach(() => {
    if (path) rmSync(path, { recursive: true, force: true });
  });
  specs(() => path!);
}
