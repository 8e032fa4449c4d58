import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { insertRows, RowShape } from './rows';
import type { Sql } from './sql';

/**
 * One database transaction, shared by the units of work of a group: what they gather is written
 * in one statement each before it commits.
 */
export class Transaction {
  readonly audit: object[] = [];
  readonly events: object[] = [];
  /** Rows changed, by table: told to other instances and dropped from this one's cache. */
  readonly changed = new Map<string, { ids: number[]; drop: (id: number) => void }>();
  readonly committed: Array<() => void> = [];
  private readonly locks = new Set<string>();

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
    if (!this.sql.postgres || this.locks.has(name)) return;
    this.locks.add(name);
    await this.sql.rows('SELECT pg_advisory_xact_lock(hashtext(?))', [name]);
  }

  /** Inserts a row into `table`, in id order; its id. */
  async insert(table: string, head: string, values: readonly unknown[]): Promise<number> {
    await this.lock(table);
    const [{ id }] = await this.sql.rows<{ id: number | string }>(
      `${head}(${values.map(() => '?').join(', ')}) RETURNING "id"`,
      values,
    );
    return Number(id);
  }

  /** Owed whether or not it committed: a COMMIT without an answer may have committed. */
  ended(committed: boolean): void {
    for (const { ids, drop } of this.changed.values()) ids.forEach(drop);
    if (committed) for (const done of this.committed) done();
  }
}
