import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { AuditLog } from '../common/audit-context';
import type { ChangeEvent, EventOutbox } from '../common/event-outbox';
import type { RowShape } from './rows';
import type { Transaction } from './transaction';

/**
 * The changes one request makes, in a transaction that other requests' units may share (a
 * group: one commit for all). Every store method that writes takes it, and so do reads that must
 * see what it wrote. A unit that fails before it wrote anything fails alone; one that fails after
 * undoes the transaction, whose other units run again in the next (never with its ids).
 */
export class UnitOfWork {
  /** It wrote, or (PostgreSQL, where a failed statement ends the transaction) a statement of it failed. */
  wrote = false;
  private readonly at = Date.now();

  constructor(
    private readonly transaction: Transaction,
    /** The API request the changes are made for: each change is audited with it. */
    readonly request: object | undefined,
    private readonly auditLog: AuditLog | undefined,
    private readonly outbox: EventOutbox | undefined,
  ) {}

  /** The transaction's own manager, for what the stores do not do; using it counts as writing. */
  get manager(): EntityManager {
    this.wrote = true;
    this.transaction.sql.begin();
    return this.transaction.manager;
  }

  get publishes(): boolean {
    return this.outbox !== undefined;
  }

  read<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.transaction.sql.rows<T>(text, params).catch((error: unknown) => this.failed(error));
  }

  arrays(text: string, params: readonly unknown[]): Promise<unknown[][]> {
    return this.transaction.sql.arrays(text, params).catch((error: unknown) => this.failed(error));
  }

  /** Row `id` of `shape`'s table as the transaction sees it; on PostgreSQL under its lock, held to commit. */
  locked<E extends ObjectLiteral>(shape: RowShape<E>, id: number): Promise<E | null> {
    return this.transaction.locked(shape, id).catch((error: unknown) => this.failed(error));
  }

  /** A statement that writes; the number of rows it changed. */
  change(text: string, params: readonly unknown[]): Promise<number> {
    return this.writes(this.transaction.sql.run(text, params));
  }

  /** Sets properties `names` to `values` on a row still at version `old` (`Transaction.compareAndSet`): 1 if it was, else 0. */
  compareAndSet(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    values: readonly unknown[],
    row: { id: number; version: number; old: number },
  ): Promise<number> {
    return this.writes(this.transaction.compareAndSet(shape, names, values, row));
  }

  /** A row of `shape`'s table (the `values` of its properties `names`), in id order; its id. */
  insert(
    shape: RowShape<ObjectLiteral>,
    names: readonly string[],
    values: readonly unknown[],
  ): Promise<number> {
    return this.writes(this.transaction.insert(shape, names, values));
  }

  /** Rows inserted now, not at commit (a fan-out's deliveries); with `returning`, their ids in the rows' order. */
  insertRows(
    target: EntityTarget<ObjectLiteral>,
    rows: readonly ObjectLiteral[],
    returning = false,
  ): Promise<number[]> {
    return this.writes(this.transaction.insertRows(target, rows, returning));
  }

  /** PostgreSQL: an advisory lock held to commit, so that units taking it run one after another (SQLite's writes always do). */
  lock(name: string): Promise<void> {
    return this.transaction.lock(name);
  }

  audit(resource: string, resourceId: number, outcome: number): void {
    if (this.request && this.auditLog)
      this.transaction.audit.push(
        this.auditLog.entry({ request: this.request, resource, resourceId, outcome }, this.at),
      );
  }

  publish(event: ChangeEvent): void {
    if (this.outbox) this.transaction.events.push(this.outbox.entry(event, this.at));
  }

  /** Row `id` of `table` changed: other instances are told, and `drop` runs once the transaction ends. */
  changed(table: string, id: number, drop: (id: number) => void): void {
    const rows = this.transaction.changed.get(table);
    if (rows) rows.ids.push(id);
    else this.transaction.changed.set(table, { ids: [id], drop });
  }

  /** `done` runs once the transaction has committed; never if it rolls back. */
  afterCommit(done: () => void): void {
    this.transaction.committed.push(done);
  }

  private async writes<T>(write: Promise<T>): Promise<T> {
    const result = await write.catch((error: unknown) => this.failed(error));
    this.wrote = true;
    return result;
  }

  private failed(error: unknown): never {
    if (this.transaction.sql.postgres) this.wrote = this.transaction.failed = true;
    throw error;
  }
}
