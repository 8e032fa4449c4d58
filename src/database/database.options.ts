import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import * as sqlite3 from 'sqlite3';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { PetEntity } from '../pets/pet.entity';
import { MIGRATIONS } from './migrations';

export const ENTITIES = [PetEntity];

/**
 * The sqlite3 driver as TypeORM should get it. TypeORM calls `verbose()` on the driver, which
 * patches every query method to capture a stack trace and `util.inspect` the SQL and parameters
 * on each call, only to lengthen error traces (its cost: docs/performance.md). This view of
 * the module answers `verbose()` with itself; errors keep SQLite's code and message.
 */
export const SQLITE3_DRIVER: typeof sqlite3 = Object.create(sqlite3, {
  verbose: { value: () => SQLITE3_DRIVER },
}) as typeof sqlite3;

/**
 * The TypeORM options for the configured database: migrations applied at start, never
 * `synchronize`; WAL so readers never wait for the writer, and a busy timeout so a writer
 * waits for a lock instead of failing.
 */
export function dataSourceOptions(config: AppConfig): DataSourceOptions {
  if (config.databasePath !== ':memory:') mkdirSync(dirname(config.databasePath), { recursive: true });
  return {
    type: 'sqlite',
    driver: SQLITE3_DRIVER,
    database: config.databasePath,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: true,
    migrationsTransactionMode: 'each',
    synchronize: false,
    enableWAL: true,
    busyTimeout: config.sqliteBusyTimeoutMs,
    logging: ['error'],
  };
}

/**
 * The durability mode. `FULL` (default): a committed row survives a process crash and a power
 * loss. `NORMAL`: survives a process crash, may lose the last commits on power loss.
 * TypeORM's SQLite driver holds one connection, so setting it once covers every query.
 */
export async function applyDurability(dataSource: DataSource, config: AppConfig): Promise<void> {
  await dataSource.query(`PRAGMA synchronous = ${config.sqliteSynchronous}`);
}
