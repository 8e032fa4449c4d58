import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { ApiKeyEntity } from '../api-keys/api-key.entity';
import { PetEntity } from '../pets/pet.entity';
import { MIGRATIONS } from './migrations';

export const ENTITIES = [PetEntity, ApiKeyEntity];

/**
 * The TypeORM options for the configured database: migrations applied at start, never
 * `synchronize`; WAL so readers never wait for the writer, and a busy timeout so a writer
 * waits for a lock instead of failing.
 */
export function dataSourceOptions(config: AppConfig): DataSourceOptions {
  if (config.databasePath !== ':memory:') mkdirSync(dirname(config.databasePath), { recursive: true });
  return {
    type: 'sqlite',
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
