import type { Sqlite3Handle } from './sql';

type Send = (...args: unknown[]) => unknown;
type Callback = (this: unknown, ...results: unknown[]) => void;
const METHODS = ['all', 'run', 'get', 'exec'] as const;
type Sqlite3Connection = Record<(typeof METHODS)[number], Send> & Pick<Sqlite3Handle, 'prepare'>;

/**
 * TypeORM's SQLite driver sends every query runner's SQL down one connection, so SQL sent while a
 * transaction is open would run inside it. While one holds the gate, SQL sent through the
 * connection waits; the transaction's own goes through `inside`, which the gate does not hold.
 */
export class SqliteGate {
  /** The connection's own methods: for the transaction that holds the gate, and nothing else. */
  readonly inside: Sqlite3Handle & Sqlite3Connection;
  private holding = false;
  private sent = 0;
  private drained: (() => void) | undefined;
  private readonly held: Array<() => void> = [];
  private turn: Promise<void> = Promise.resolve();

  constructor(connection: Sqlite3Connection) {
    const inside = { prepare: connection.prepare.bind(connection) } as Sqlite3Handle & Sqlite3Connection;
    for (const method of METHODS) {
      const send = connection[method].bind(connection);
      inside[method] = send;
      connection[method] = (...args: unknown[]) => {
        if (this.holding) {
          this.held.push(() => this.count(send, args));
          return connection;
        }
        return this.count(send, args);
      };
    }
    this.inside = inside;
  }

  /** `work` alone on the connection: SQL sent before it began has been answered, SQL sent meanwhile waits. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.turn;
    let finished!: () => void;
    this.turn = new Promise((resolve) => (finished = resolve));
    await previous;
    this.holding = true;
    try {
      if (this.sent > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      return await work();
    } finally {
      this.holding = false;
      for (const resume of this.held.splice(0)) resume();
      finished();
    }
  }

  private count(send: Send, args: unknown[]): unknown {
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback !== 'function') return send(...args);
    this.sent++;
    const answered = () => {
      if (--this.sent === 0 && this.drained) {
        this.drained();
        this.drained = undefined;
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
