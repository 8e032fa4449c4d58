import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { databaseOutageCause } from './outage';
import { insertRows, ROWS_PER_INSERT, RowShape } from './rows';
import type { Sql } from './sql';

interface PendingRow {
  values: readonly unknown[];
  resolve: (id: number) => void;
  reject: (error: unknown) => void;
}

interface PendingInsert {
  table: string;
  /** `INSERT INTO "t" ("a", "b") VALUES `: the rows' tuples and `RETURNING "id"` follow. */
  head: string;
  rows: PendingRow[];
}

/**
 * One database transaction, shared by the units of work of a group: what they gather is written
 * in one statement each before it commits. On SQLite, where every statement costs a turn of the
 * event loop, the rows units insert meanwhile go in one INSERT per table.
 */
export class Transaction {
  readonly audit: object[] = [];
  readonly events: object[] = [];
  /** Rows changed, by table: told to other instances and dropped from this one's cache. */
  readonly changed = new Map<string, { ids: number[]; drop: (id: number) => void }>();
  readonly committed: Array<() => void> = [];
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly inserts = new Map<string, PendingInsert>();

  constructor(
    readonly manager: EntityManager,
    readonly sql: Sql,
    private readonly shape: (target: EntityTarget<ObjectLiteral>) => RowShape<ObjectLiteral>,
  ) {}

  insertRows(target: EntityTarget<ObjectLiteral>, rows: readonly ObjectLiteral[]): Promise<void> {
    return insertRows(this.sql, this.shape(target), rows);
  }

  /** PostgreSQL hands ids out before commit: held from the first insert to commit, a lock makes them visible in order. */
  async lock(name: string): Promise<void> {
    if (!this.sql.postgres) return;
    let locked = this.locks.get(name);
    if (!locked)
      this.locks.set(name, (locked = this.sql.rows('SELECT pg_advisory_xact_lock(hashtext(?))', [name])));
    await locked;
  }

  /** Inserts a row into `table` (in id order); its id. */
  insert(table: string, head: string, values: readonly unknown[]): Promise<number> {
    if (this.sql.postgres) return this.lock(table).then(() => this.send(head, [values]).then(([id]) => id));
    const key = `${table} ${head}`;
    let pending = this.inserts.get(key);
    if (!pending) {
      if (this.inserts.size === 0) setImmediate(() => void this.sendInserts());
      this.inserts.set(key, (pending = { table, head, rows: [] }));
    }
    const rows = pending.rows;
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
    await Promise.all(inserts.map((pending) => this.sendInsert(pending)));
  }

  private async sendInsert({ head, rows }: PendingInsert): Promise<void> {
    try {
      const ids: number[] = [];
      for (let start = 0; start < rows.length; start += ROWS_PER_INSERT)
        ids.push(
          ...(await this.send(
            head,
            rows.slice(start, start + ROWS_PER_INSERT).map((row) => row.values),
          )),
        );
      rows.forEach((row, index) => row.resolve(ids[index]));
    } catch (error) {
      if (rows.length === 1 || databaseOutageCause(error) !== undefined) {
        for (const row of rows) row.reject(error);
        return;
      }
      // One row refused (a foreign key): SQLite undid only that statement; each row alone, so that only its unit fails.
      for (const row of rows) await this.send(head, [row.values]).then(([id]) => row.resolve(id), row.reject);
    }
  }

  /** Ids are given in the order of the rows of one INSERT, whatever order RETURNING lists them in. */
  private async send(head: string, rows: readonly (readonly unknown[])[]): Promise<number[]> {
    const tuples = rows.map((values) => `(${values.map(() => '?').join(', ')})`).join(', ');
    const returned = await this.sql.rows<{ id: number | string }>(
      `${head}${tuples} RETURNING "id"`,
      rows.flat(),
    );
    return returned.map(({ id }) => Number(id)).sort((a, b) => a - b);
  }
}
