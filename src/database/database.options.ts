import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import * as sqlite3 from 'sqlite3';
import { DataSource, DataSourceOptions } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { AppDataSource } from './dialect';
import { ALL_ENTITIES, ALL_MIGRATIONS } from './schema';

/** Any number, shared by every instance: the PostgreSQL advisory lock held while migrating. */
const MIGRATION_LOCK_ID = 7_348_214_901;

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
 * The TypeORM options for the configured database. Migrations are applied by `openDatabase`
 * (under a lock), never `synchronize`. SQLite: WAL so readers never wait for the writer, and a
 * busy timeout so a writer waits for the lock instead of failing. PostgreSQL: a bounded pool,
 * timeouts, and int8 parsed as numbers (the values we store stay below 2^53).
 */
export function dataSourceOptions(config: AppConfig): DataSourceOptions {
  const common = {
    entities: [...ALL_ENTITIES],
    migrations: [...ALL_MIGRATIONS],
    migrationsRun: false,
    synchronize: false,
    // Failed queries surface as errors, which the filter logs once with their stack; TypeORM's own
    // log would repeat them with their parameters, and expected conflicts (a unique index
    // deciding between concurrent idempotent requests) are not errors.
    logging: false,
  };
  if (config.databaseUrl !== null) {
    return {
      ...common,
      type: 'postgres',
      url: config.databaseUrl,
      schema: config.databaseSchema,
      parseInt8: true,
      applicationName: 'petstore',
      poolSize: config.dbPoolSize,
      connectTimeoutMS: config.dbConnectTimeoutMs,
      // search_path too, so that raw SQL (an operator's, a test's) sees the same tables.
      extra: {
        statement_timeout: config.dbStatementTimeoutMs,
        options: `-c search_path=${config.databaseSchema}`,
      },
    };
  }
  if (config.databasePath !== ':memory:') mkdirSync(dirname(config.databasePath), { recursive: true });
  return {
    ...common,
    type: 'sqlite',
    driver: SQLITE3_DRIVER,
    database: config.databasePath,
    enableWAL: true,
    busyTimeout: config.sqliteBusyTimeoutMs,
  };
}

/** Applies pending migrations; on PostgreSQL one instance at a time (advisory lock), the others wait. */
async function migrate(dataSource: DataSource, config: AppConfig): Promise<void> {
  if (dataSource.options.type !== 'postgres') {
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${config.databaseSchema}"`);
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await runner.release();
  }
}

/**
 * SQLite's durability mode. `FULL` (default): a committed row survives a process crash and a
 * power loss. `NORMAL`: survives a process crash, may lose the last commits on power loss.
 * TypeORM's SQLite driver holds one connection, so setting it once covers every query.
 */
async function applyDurability(dataSource: DataSource, config: AppConfig): Promise<void> {
  if (dataSource.options.type === 'sqlite') {
    await dataSource.query(`PRAGMA synchronous = ${config.sqliteSynchronous}`);
  }
}

/** Connects, applies pending migrations and sets durability: what the app and the CLI both need. */
export async function openDatabase(
  config: AppConfig,
  options = dataSourceOptions(config),
): Promise<DataSource> {
  const dataSource = await new AppDataSource(options).initialize();
  try {
    await migrate(dataSource, config);
    await applyDurability(dataSource, config);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}
