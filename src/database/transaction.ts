import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { Batches } from './batches';
import type { RowShape } from './rows';
import type { Sql } from './sql';

/** Rows in one INSERT at most: well within SQLite's limit on parameters. */
const ROWS_PER_INSERT = 100;

/** PostgreSQL: the lock of a name, held to commit. */
const ADVISORY_LOCK = 'pg_advisory_xact_lock(hashtext(?))';

/** A table's rows to insert: the values of its properties `names`, row by row. */
interface Rows {
  shape: RowShape<ObjectLiteral>;
  names: readonly string[];
  values: readonly (readonly unknown[])[];
  /** Taken before any of them draws its id, held to commit (PostgreSQL). */
  lock?: string;
}

/** Rows of an entity to insert; with `lock`, under that lock (`Transaction.lock`). */
export interface TableRows {
  target: EntityTarget<ObjectLiteral>;
  rows: readonly ObjectLiteral[];
  lock?: string;
}

/** A PostgreSQL notice (channel, payload): listeners hear it once the transaction commits. */
export type Notice = readonly [channel: string, payload: string];

/**
 * One database transaction, shared by the units of work of a group: what they gather is written
 * before it commits, an INSERT per table. On PostgreSQL, where each statement is a round trip, the
 * rows the units insert or change meanwhile go in one statement per table, and what they gather in one.
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
  private readonly batches = new Batches();

  constructor(
    readonly manager: EntityManager,
    readonly sql: Sql,
    private readonly shape: (target: EntityTarget<ObjectLiteral>) => RowShape<ObjectLiteral>,
  ) {}

  /**
   * Rows in plain multi-row INSERTs (TypeORM's insert builder was a tenth of a create's CPU); with
   * `returning`, their ids in the rows' order.
   */
  insertRows(
    target: EntityTarget<ObjectLiteral>,
    rows: readonly ObjectLiteral[],
    returning = false,
  ): Promise<number[]> {
    return this.send([this.rowsOf(target, rows)], [], returning);
  }

  /** Each table's rows and the notices: on PostgreSQL one statement for all (`send`). */
  insertAll(tables: readonly TableRows[], notices: readonly Notice[]): Promise<number[]> {
    return this.send(
      tables.map(({ target, rows, lock }) => this.rowsOf(target, rows, lock)),
      notices,
    );
  }

  /** PostgreSQL hands ids out before commit: held from the first insert to commit, a lock makes them visible in order. */
  async lock(name: string): Promise<void> {
    if (!this.sql.postgres || this.locks.has(name)) return;
    this.locks.add(name);
    await this.sql.rows(`SELECT ${ADVISORY_LOCK}`, [name]);
  }

  /** Inserts a row of `shape`'s table (the `values` of its properties `names`), in id order; its id. */
  async insert(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    values: readonly unknown[],
  ): Promise<number> {
    if (!this.sql.postgres) return (await this.send([{ shape, names, values: [values] }], [], true))[0];
    return this.batches.add(`insert ${shape.table} ${names.join()}`, values, (rows) =>
      this.send([{ shape, names, values: rows, lock: shape.table }], [], true),
    );
  }

  /**
   * Row `id` of `shape`'s table as the transaction sees it; on PostgreSQL under its lock, held to
   * commit, and the rows units ask for meanwhile in one SELECT, locked in id order.
   */
  async locked<E extends ObjectLiteral>(shape: RowShape<E>, id: number): Promise<E | null> {
    if (!this.sql.postgres) {
      const [row] = await this.sql.arrays(shape.byId(false), [id]);
      return row === undefined ? null : shape.values(row);
    }
    return this.batches.add(`locked ${shape.table}`, [id], async (rows) => {
      const ids = rows.map(([rowId]) => rowId as number);
      const found = new Map<unknown, unknown[]>();
      for (const row of await this.sql.arrays(shape.byIds(), [ids])) found.set(Number(row[shape.idAt]), row);
      return ids.map((rowId) => {
        const row = found.get(rowId);
        return row === undefined ? null : shape.values(row);
      });
    });
  }

  /**
   * Sets the `values` of properties `names` and `version` on row `id` where it is still at version
   * `old`: 1 if it was, else 0. On PostgreSQL a table's changes of the same properties go in one
   * UPDATE, a row at most once, in id order.
   */
  compareAndSet(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    values: readonly unknown[],
    { id, version, old }: { id: number; version: number; old: number },
  ): Promise<number> {
    const params = [...values, version, id, old];
    const key = `update ${shape.table} ${names.join()}`;
    const all = this.sql.postgres ? shape.compareAndSetAll(names) : undefined;
    const idAt = names.length + 1;
    if (all === undefined || this.batches.holds(key, idAt, id))
      return this.sql.run(shape.compareAndSet(names), params);
    return this.batches.add(key, params, async (rows) => {
      const inOrder = [...rows].sort((a, b) => (a[idAt] as number) - (b[idAt] as number));
      const columns = inOrder[0].map((_, column) => inOrder.map((row) => row[column]));
      const changed = new Set((await this.sql.arrays(all, columns)).map(([changedId]) => Number(changedId)));
      return rows.map((row) => (changed.has(row[idAt] as number) ? 1 : 0));
    });
  }

  /** Owed whether or not it committed: a COMMIT without an answer may have committed. */
  ended(committed: boolean): void {
    for (const { ids, drop } of this.changed.values()) ids.forEach(drop);
    if (committed) for (const done of this.committed) done();
  }

  private rowsOf(target: EntityTarget<ObjectLiteral>, rows: readonly ObjectLiteral[], lock?: string): Rows {
    const shape = this.shape(target);
    const names = Object.keys(rows[0]);
    return {
      shape,
      names,
      values: rows.map((row) => names.map((name) => shape.stored(name, row[name]))),
      lock,
    };
  }

  /**
   * Inserts the tables' rows and sends the notices; with `returning`, the ids of the last table's
   * rows, in the rows' order whatever order RETURNING lists them in. On PostgreSQL one statement
   * (`together`); else, and where a column's type is not a plain one, each lock, notice and
   * `ROWS_PER_INSERT` rows a statement.
   */
  private async send(tables: Rows[], notices: readonly Notice[], returning = false): Promise<number[]> {
    const ids: number[] = [];
    const together = this.sql.postgres ? this.together(tables, notices) : undefined;
    if (together) {
      if (!returning) await this.sql.run(together.text, together.params);
      else ids.push(...(await this.returned(`${together.text} RETURNING "id"`, together.params)));
      return ids.sort((a, b) => a - b);
    }
    for (const [channel, payload] of notices)
      await this.sql.rows('SELECT pg_notify(?, ?)', [channel, payload]);
    for (const { shape, names, values, lock } of tables) {
      if (lock !== undefined) await this.lock(lock);
      for (let start = 0; start < values.length; start += ROWS_PER_INSERT) {
        const chunk = values.slice(start, start + ROWS_PER_INSERT);
        const text = shape.insertValues(names, chunk.length);
        if (!returning) await this.sql.run(text, chunk.flat());
        else ids.push(...(await this.returned(`${text} RETURNING "id"`, chunk.flat())));
      }
    }
    return ids.sort((a, b) => a - b);
  }

  private async returned(text: string, params: readonly unknown[]): Promise<number[]> {
    return (await this.sql.rows<{ id: number | string }>(text, params)).map(({ id }) => Number(id));
  }

  /**
   * PostgreSQL: one statement whose text does not vary with the number of rows (an array per
   * column). The locks and notices come first, in a one-row CTE that each INSERT joins, so that no
   * row draws its id before the locks are held; undefined where a column's type is not a plain one.
   */
  private together(
    tables: Rows[],
    notices: readonly Notice[],
  ): { text: string; params: unknown[] } | undefined {
    const first: string[] = [];
    const params: unknown[] = [];
    const locks = new Set(
      tables.flatMap(({ lock }) => (lock === undefined || this.locks.has(lock) ? [] : [lock])),
    );
    for (const lock of locks) {
      first.push(ADVISORY_LOCK);
      params.push(lock);
    }
    if (notices.length > 0) {
      first.push(
        '(SELECT count(*) FROM unnest(?::text[], ?::text[]) AS "n" ("channel", "payload") WHERE pg_notify("channel", "payload") IS NOT NULL)',
      );
      params.push(
        notices.map(([channel]) => channel),
        notices.map(([, payload]) => payload),
      );
    }
    const inserts: string[] = [];
    for (const { shape, names, values } of tables) {
      const rows = shape.unnest(names);
      if (!rows) return undefined;
      inserts.push(`${shape.insertInto(names)} SELECT "v".* FROM "first", ${rows} AS "v"`);
      params.push(...names.map((_, column) => values.map((row) => row[column])));
    }
    for (const lock of locks) this.locks.add(lock);
    const main = inserts.pop() ?? 'SELECT count(*) FROM "first"';
    const ctes = [
      `"first" AS MATERIALIZED (SELECT ${first.join(', ') || '1'})`,
      ...inserts.map((insert, index) => `"insert${index}" AS (${insert})`),
    ];
    return { text: `WITH ${ctes.join(', ')} ${main}`, params };
  }
}
