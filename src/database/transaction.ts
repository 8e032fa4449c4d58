import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { RowShape } from './rows';
import type { Sql } from './sql';

/** Rows in one INSERT at most: well within SQLite's limit on parameters. */
const ROWS_PER_INSERT = 100;

interface PendingRow {
  values: readonly unknown[];
  resolve: (id: number) => void;
  reject: (error: unknown) => void;
}

/**
 * One database transaction, shared by the units of work of a group: what they gather is written
 * in one statement each before it commits. On PostgreSQL, where each statement is a round trip,
 * the rows the units insert meanwhile go in one INSERT per table.
 */
export class Transaction {
  readonly audit: object[] = [];
  readonly events: object[] = [];
  /** Rows changed, by table: told to other instances and dropped from this one's cache. */
  readonly changed = new Map<string, { ids: number[]; drop: (id: number) => void }>();
  readonly committed: Array<() => void> = [];
  /** A statement failed: on PostgreSQL the transaction is over for every unit. */
  failed = false;
  private readonly locks = new Set<string>();
  private readonly inserts = new Map<
    string,
    { shape: RowShape<ObjectLiteral>; names: readonly string[]; rows: PendingRow[] }
  >();

  constructor(
    readonly manager: EntityManager,
    readonly sql: Sql,
    private readonly shape: (target: EntityTarget<ObjectLiteral>) => RowShape<ObjectLiteral>,
  ) {}

  /**
   * Rows in plain multi-row INSERTs (TypeORM's insert builder was a tenth of a create's CPU); with
   * `returning`, their ids in the rows' order; with `lock`, under that lock (`lock`).
   */
  insertRows(
    target: EntityTarget<ObjectLiteral>,
    rows: readonly ObjectLiteral[],
    returning = false,
    lock?: string,
  ): Promise<number[]> {
    const shape = this.shape(target);
    const names = Object.keys(rows[0]);
    const values = rows.map((row) => names.map((name) => shape.stored(name, row[name])));
    return this.send(shape, names, values, returning, lock);
  }

  /** PostgreSQL hands ids out before commit: held from the first insert to commit, a lock makes them visible in order. */
  async lock(name: string): Promise<void> {
    if (!this.sql.postgres || this.locks.has(name)) return;
    this.locks.add(name);
    await this.sql.rows('SELECT pg_advisory_xact_lock(hashtext(?))', [name]);
  }

  /** Inserts a row of `shape`'s table (the `values` of its properties `names`), in id order; its id. */
  async insert(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    values: readonly unknown[],
  ): Promise<number> {
    if (!this.sql.postgres) return (await this.send(shape, names, [values]))[0];
    const key = `${shape.table} ${names.join()}`;
    let pending = this.inserts.get(key);
    if (!pending) {
      if (this.inserts.size === 0) setImmediate(() => void this.sendInserts());
      this.inserts.set(key, (pending = { shape, names, rows: [] }));
    }
    const { rows } = pending;
    return new Promise((resolve, reject) => rows.push({ values, resolve, reject }));
  }

  /** Owed whether or not it committed: a COMMIT without an answer may have committed. */
  ended(committed: boolean): void {
    for (const { ids, drop } of this.changed.values()) ids.forEach(drop);
    if (committed) for (const done of this.committed) done();
  }

  private async sendInserts(): Promise<void> {
    const inserts = [...this.inserts.values()];
    this.inserts.clear();
    for (const { shape, names, rows } of inserts) {
      try {
        const values = rows.map((row) => row.values);
        const ids = await this.send(shape, names, values, true, shape.table);
        rows.forEach((row, index) => row.resolve(ids[index]));
      } catch (error) {
        for (const row of rows) row.reject(error);
      }
    }
  }

  /**
   * Rows in INSERTs of `ROWS_PER_INSERT` at most; with `returning`, their ids, in the rows' order
   * whatever order RETURNING lists them in.
   */
  private async send(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    rows: readonly (readonly unknown[])[],
    returning = true,
    lock?: string,
  ): Promise<number[]> {
    // PostgreSQL: the first INSERT takes the lock itself where it can (a round trip less).
    let locking = lock !== undefined && this.sql.postgres && !this.locks.has(lock);
    if (locking && !shape.insert(names, 1, true)) {
      await this.lock(lock!);
      locking = false;
    }
    const ids: number[] = [];
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const text = shape.insert(names, chunk.length, locking)!;
      const params = locking ? [lock, ...chunk.flat()] : chunk.flat();
      if (locking) {
        this.locks.add(lock!);
        locking = false;
      }
      if (!returning) await this.sql.run(text, params);
      else {
        const returned = await this.sql.rows<{ id: number | string }>(`${text} RETURNING "id"`, params);
        ids.push(...returned.map(({ id }) => Number(id)));
      }
    }
    return ids.sort((a, b) => a - b);
  }
}
