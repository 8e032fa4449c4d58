import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DataSource, DataSourceOptions } from 'typeorm';
import { DatabaseConfig } from '../config/app-config';
import { AppDataSource } from './dialect';
import { entitiesOf, migrationsOf, ModuleSchema } from './module-schema';
import { Connections } from './connections';

/** Any number, the same on every instance: the advisory lock held while migrating. */
const MIGRATION_LOCK_ID = 7_348_214_901;

/** The TypeORM options of the configured database; int8 is read as a number (ours stay below 2^53). */
export function dataSourceOptions(
  database: DatabaseConfig,
  schemas: readonly ModuleSchema[],
): DataSourceOptions {
  const common = {
    entities: entitiesOf(schemas),
    migrations: migrationsOf(schemas),
    migrationsRun: false,
    synchronize: false,
    // Failed queries reach the exception filter, which logs them once.
    logging: false,
  };
  if (database.url !== null) {
    return {
      ...common,
      type: 'postgres',
      url: database.url,
      schema: database.schema,
      parseInt8: true,
      applicationName: 'petstore',
      poolSize: database.poolSize,
      connectTimeoutMS: database.connectTimeoutMs,
      // search_path too, so that raw SQL (an operator's, a test's) sees the same tables.
      extra: {
        statement_timeout: database.statementTimeoutMs,
        options: `-c search_path=${database.schema}`,
        Client: heardClient(),
      },
    };
  }
  if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
  return {
    ...common,
    type: 'better-sqlite3',
    driver: BetterSqlite3,
    // `:memory:` lasts as long as the process, in a file of its own (removed on close), so that
    // reads have a connection of their own there too.
    database:
      database.path === ':memory:'
        ? join(mkdtempSync(join(tmpdir(), 'petstore-memory-')), 'petstore.sqlite')
        : database.path,
    enableWAL: true,
    timeout: database.sqliteBusyTimeoutMs,
  };
}

/** Connects, migrates, sets SQLite's durability (on TypeORM's one connection, the writer) and opens the readers. */
export async function openDatabase(
  database: DatabaseConfig,
  options: DataSourceOptions,
): Promise<DataSource> {
  const dataSource = await new AppDataSource(options).initialize();
  try {
    if (dataSource.options.type === 'postgres') {
      const runner = dataSource.createQueryRunner();
      try {
        await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
        await runner.query(`CREATE SCHEMA IF NOT EXISTS "${database.schema}"`);
        await dataSource.runMigrations({ transaction: 'each' });
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
        await runner.release();
      }
    } else {
      await dataSource.runMigrations({ transaction: 'each' });
      await dataSource.query(
        `PRAGMA synchronous = ${database.path === ':memory:' ? 'OFF' : database.sqliteSynchronous}`,
      );
    }
    await Connections.open(dataSource, database);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

/**
 * pg-pool hears a client's errors only while it is idle. A server that ends a lent client's
 * connection (a restart's 57P01, even in the packet that completes the connect) would be an
 * uncaught exception; heard from the start, it fails only that client's next query.
 */
function heardClient(): typeof import('pg').Client {
  // Loaded only on PostgreSQL, as TypeORM loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client } = require('pg') as typeof import('pg');
  return class extends Client {
    constructor(config?: ConstructorParameters<typeof Client>[0]) {
      super(config);
      this.on('error', () => undefined);
    }
  };
}
