import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource } from 'typeorm';

type Callback = (this: unknown, ...results: unknown[]) => void;
type Send = (...args: unknown[]) => unknown;
const METHODS = ['all', 'run', 'get', 'exec'] as const;
type Sqlite3Connection = Record<(typeof METHODS)[number], Send>;
const gates = new WeakMap<DataSource, SqliteGate>();

/** TypeORM's SQLite driver shares one connection, so a transaction would take in others' SQL: it waits. */
export class SqliteGate {
  private readonly context = new AsyncLocalStorage<symbol>();
  private holder: symbol | undefined;
  private sent = 0;
  private onDrained: (() => void) | undefined;
  private readonly held: Array<() => void> = [];
  private turn: Promise<void> = Promise.resolve();

  constructor(connection: Sqlite3Connection) {
    for (const method of METHODS) {
      const send = connection[method].bind(connection);
      connection[method] = (...args: unknown[]) => {
        if (this.holder !== undefined && this.context.getStore() !== this.holder) {
          this.held.push(() => this.send(send, args));
          return connection;
        }
        return this.send(send, args);
      };
    }
  }

  /** Inside the transaction that holds the gate: its reads see what it has not committed. */
  heldHere(): boolean {
    return this.holder !== undefined && this.context.getStore() === this.holder;
  }

  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.turn;
    let finished!: () => void;
    const mine = (this.turn = new Promise((resolve) => (finished = resolve)));
    await previous;
    const token = Symbol('transaction');
    this.holder = token;
    try {
      // SQL sent before the gate closed runs before the transaction begins.
      if (this.sent > 0) await new Promise<void>((resolve) => (this.onDrained = resolve));
      return await this.context.run(token, work);
    } finally {
      this.holder = undefined;
      for (const resume of this.held.splice(0)) resume();
      finished();
      // With none waiting: Node 20 slows every promise while an AsyncLocalStorage is enabled.
      if (this.turn === mine) this.context.disable();
    }
  }

  private send(send: Send, args: unknown[]): unknown {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback !== 'function') return send(...args);
    this.sent++;
    const answered = () => {
      if (--this.sent === 0 && this.onDrained) {
        this.onDrained();
        this.onDrained = undefined;
      }
    };
    // The driver calls back with the statement as `this` (lastID, changes): passed on as it is.
    args[last] = function (this: unknown, ...results: unknown[]) {
      answered();
      return (callback as Callback).apply(this, results);
    };
    return send(...args);
  }
}

export function installSqliteGate(dataSource: DataSource): void {
  if (dataSource.options.type !== 'sqlite' || gates.has(dataSource)) return;
  const { databaseConnection } = dataSource.driver as unknown as { databaseConnection: Sqlite3Connection };
  gates.set(dataSource, new SqliteGate(databaseConnection));
}

export function sqliteGateOf(dataSource: DataSource): SqliteGate | undefined {
  return gates.get(dataSource);
}
