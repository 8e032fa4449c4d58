import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { DataSource, EntityTarget, ObjectLiteral, QueryRunner } from 'typeorm';
import type { BetterSqlite3Driver } from 'typeorm/driver/better-sqlite3/BetterSqlite3Driver';
import { BetterSqlite3QueryRunner } from 'typeorm/driver/better-sqlite3/BetterSqlite3QueryRunner';
import type { Page } from '../common/pagination/page';
import type { DatabaseConfig } from '../config/app-config';
import { Condition, keysetPage, KeysetRequest } from './keyset-pager';
import { OutageWaiting, repeatable, retryUnlessCommitted } from './outage-wait';
import { Row, RowShape } from './rows';
import { OnFailure, PgQueryable, PostgresStatements, Sql, SqliteStatements } from './sql';
import { SqliteGate } from './sqlite-gate';

/**
 * The connections of the write path and the reads beside TypeORM's data source. Reads have their
 * own: on SQLite (WAL) a read-only connection, on PostgreSQL a pool of their own, so that a read
 * never waits behind a write transaction.
 */
export class Connections {
  private readonly shapes = new Map<EntityTarget<ObjectLiteral>, RowShape<ObjectLiteral>>();
  /** PostgreSQL: waits out a restart (`DB_OUTAGE_WAIT_MS`). */
  private outage?: OutageWaiting;

  private constructor(
    private readonly dataSource: DataSource,
    /** Every driver tells TypeORM's logger of each failed query (the metrics count them); so do the statements. */
    readonly failed: OnFailure,
    readonly reads: Sql,
    /**
     * SQLite: TypeORM's connection, which transactions hold in turn (the gate), through a query
     * runner of their own and these statements.
     */
    readonly sqlite?: { gate: SqliteGate; runner: QueryRunner; statements: SqliteStatements },
  ) {}

  /** A read, repeated while the database restarts (PostgreSQL) or once on a broken connection. */
  repeatable<T>(read: () => Promise<T>): Promise<T> {
    return repeatable(this.outage, read);
  }

  /** A transaction, repeated while the database restarts, unless it may have committed. */
  retryUnlessCommitted<T>(work: (reachedCommit: () => void) => Promise<T>): Promise<T> {
    return retryUnlessCommitted(this.outage, work);
  }

  /** An entity's table as the statements of the stores and the pager see it. */
  shape<E extends ObjectLiteral>(target: EntityTarget<E>): RowShape<E> {
    let shape = this.shapes.get(target);
    if (!shape) this.shapes.set(target, (shape = new RowShape(this.dataSource, target)));
    return shape as RowShape<E>;
  }

  /** A keyset page of `target`'s rows, read on the reads' connection (keyset-pager.ts). */
  page<E extends Row>(
    target: EntityTarget<E>,
    where: readonly Condition[],
    request: KeysetRequest,
  ): Promise<Page<E>> {
    return this.repeatable(() => keysetPage(this.reads, this.shape(target), where, request));
  }

  static of(dataSource: DataSource): Connections {
    const connections = opened.get(dataSource);
    if (!connections) throw new Error('a data source not opened by openDatabase');
    return connections;
  }

  /** Opens the reads' connections; the data source closes them (and its statements) before itself. */
  static async open(dataSource: DataSource, config: DatabaseConfig): Promise<Connections> {
    let connections: Connections;
    let close: () => Promise<void>;
    /** The folder of a `:memory:` database's file, removed once it is closed. */
    let temporary: string | undefined;
    const failed: OnFailure = (error, text) => {
      dataSource.logger.logQueryError(error as Error, text, []);
    };
    if (dataSource.options.type === 'postgres') {
      const driver = dataSource.driver as unknown as PostgresDriver;
      const pool = await driver.createPool(dataSource.options, dataSource.options);
      connections = new Connections(dataSource, failed, new PostgresStatements(pool, failed));
      if (config.outageWaitMs > 0) {
        const outage = (connections.outage = new OutageWaiting(config));
        // TypeORM's pool asks for a connection again while the database restarts.
        const obtain = driver.obtainMasterConnection.bind(driver);
        driver.obtainMasterConnection = () => outage.retry(obtain, () => true);
      }
      close = () => pool.end();
    } else {
      const driver = dataSource.driver as BetterSqlite3Driver;
      const runner = new BetterSqlite3QueryRunner(driver);
      Object.assign(runner, { manager: dataSource.createEntityManager(runner) });
      const file = String(dataSource.options.database);
      const reader = new BetterSqlite3(file, { readonly: true, timeout: config.sqliteBusyTimeoutMs });
      connections = new Connections(dataSource, failed, new SqliteStatements(reader, failed), {
        gate: new SqliteGate(driver.createQueryRunner('master')),
        runner,
        statements: new SqliteStatements(driver.databaseConnection as BetterSqlite3.Database, failed),
      });
      close = () => Promise.resolve(void reader.close());
      if (config.path === ':memory:') temporary = dirname(file);
    }
    opened.set(dataSource, connections);
    const destroy = dataSource.destroy.bind(dataSource);
    dataSource.destroy = async () => {
      await close().catch(() => undefined);
      await destroy();
      if (temporary) rmSync(temporary, { recursive: true, force: true });
    };
    return connections;
  }
}

const opened = new WeakMap<DataSource, Connections>();

interface PostgresDriver {
  createPool(options: unknown, credentials: unknown): Promise<PgQueryable & { end(): Promise<void> }>;
  obtainMasterConnection(): Promise<unknown>;
}
