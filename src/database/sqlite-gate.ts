import type { QueryRunner } from 'typeorm';

/**
 * TypeORM's SQLite driver sends every query down one connection, through one query runner, so a
 * query sent while a transaction is open would run inside it. While a transaction holds the gate,
 * the queries of that runner wait; the transaction's own go through a runner of its own.
 */
export class SqliteGate {
  private running = 0;
  private drained: (() => void) | undefined;
  /** While a transaction holds the gate: settled when it lets go. */
  private released: Promise<void> | undefined;
  private turn: Promise<void> = Promise.resolve();

  constructor(shared: QueryRunner) {
    const query = shared.query.bind(shared);
    shared.query = (async (...args: Parameters<QueryRunner['query']>): Promise<unknown> => {
      while (this.released) await this.released;
      this.running++;
      try {
        return await query(...args);
      } finally {
        if (--this.running === 0) this.drained?.();
      }
    }) as QueryRunner['query'];
  }

  /** `work` alone on the connection: queries begun before it have ended, queries sent meanwhile wait. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    const previous = this.turn;
    let finished!: () => void;
    this.turn = new Promise((resolve) => (finished = resolve));
    await previous;
    let release!: () => void;
    this.released = new Promise((resolve) => (release = resolve));
    try {
      if (this.running > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      return await work();
    } finally {
      this.released = undefined;
      release();
      finished();
    }
  }
}
