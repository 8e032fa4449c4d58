import { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/app-config';
import { dataSourceOptions, openDatabase } from '../../src/database/database.options';
import { SCHEMAS } from '../../src/features';

/** The service's database, migrated as at start: SQLite in memory unless `env` says otherwise. */
export function openMigratedDatabase(
  env: Record<string, string> = { DATABASE_PATH: ':memory:' },
): Promise<DataSource> {
  const { database } = loadConfig(env);
  return openDatabase(database, dataSourceOptions(database, SCHEMAS));
}
