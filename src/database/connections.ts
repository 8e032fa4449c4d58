import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import * as sqlite3 from 'sqlite3';
import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { Page } from '../common/pagination/page';
import type { DatabaseConfig } from '../config/app-config';
import { Condition, keysetPage, KeysetRequest } from './keyset-pager';
import { OutageWaiting, repeatable, retryUnlessCommitted } from './outage-wait';
import { Row, RowShape } from './rows';
import { PostgresStatements, Sql, Sqlite3Handle, SqliteStatements } from './sql';
import { SqliteGate } from './sqlite-gate';

type Config = Pick<DatabaseConfig, 'path' | 'sqliteBusyTimeoutMs' | 'outageWaitMs' | 'outageMaxWaiting'>;

/**
 * The connections of the write path and the reads beside TypeORM's data source. Reads have their
 * own: on SQLite (WAL) a read-only connection, on PostgreSQL a pool of their own, so that a read
 * never waits behind a write transaction.
 */
export class Connections {
  private readonly shapes = new Map<EntityTarget<ObjectLiteral>, RowShape<ObjectLiteral>>();

  private constructor(
    private readonly dataSource: DataSource,
    readonly reads: Sql,
    /** SQLite: TypeORM's connection, which transactions hold in turn; its prepared statements. */
    readonly sqlite?: { gate: SqliteGate; statements: SqliteStatements },
    /** PostgreSQL: waits out a restart (`DB_OUTAGE_WAIT_MS`). */
    readonly outage?: OutageWaiting,
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
  static async open(dataSource: DataSource, config: Config): Promise<Connections> {
    let connections: Connections;
    let close: () => Promise<void>;
    /** The folder of a `:memory:` database's file, removed once it is closed. */
    let temporary: string | undefined;
    if (dataSource.options.type === 'postgres') {
      const driver = dataSource.driver as unknown as PostgresDriver;
      const pool = await driver.createPool(dataSource.options, dataSource.options);
      const outage = config.outageWaitMs > 0 ? new OutageWaiting(config) : undefined;
      connections = new Connections(dataSource, new PostgresStatements(pool), undefined, outage);
      close = () => pool.end();
    } else {
      const { databaseConnection } = dataSource.driver as unknown as { databaseConnection: never };
      const gate = new SqliteGate(databaseConnection);
      const statements = new SqliteStatements(gate.inside);
      const file = String(dataSource.options.database);
      const reader = await openReader(file, config.sqliteBusyTimeoutMs);
      const reads = new SqliteStatements(reader.handle);
      connections = new Connections(dataSource, reads, { gate, statements });
      close = async () => {
        await statements.finalize();
        await reads.finalize();
        await reader.close();
      };
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
  createPool(options: unknown, credentials: unknown): Promise<Sql & PgPool>;
}

interface PgPool {
  query(config: never): never;
  end(): Promise<void>;
}

async function openReader(
  file: string,
  busyTimeoutMs: number,
): Promise<{ handle: Sqlite3Handle; close: () => Promise<void> }> {
  const database = await new Promise<sqlite3.Database>((resolve, reject) => {
    const opening: sqlite3.Database = new sqlite3.Database(file, sqlite3.OPEN_READONLY, (error) =>
      error ? reject(error) : resolve(opening),
    );
  });
  database.configure('busyTimeout', busyTimeoutMs);
  return {
    handle: database as unknown as Sqlite3Handle,
    close: () => new Promise((resolve) => database.close(() => resolve())),
  };
}
