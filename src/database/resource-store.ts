import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  DataSource,
  EntityManager,
  EntityTarget,
  FindOptionsOrder,
  FindOptionsWhere,
  MoreThan,
  ObjectLiteral,
  QueryRunner,
  Repository,
} from 'typeorm';
import { LRUCache } from 'lru-cache';
import { ApplyValueTransformers } from 'typeorm/util/ApplyValueTransformers';
import { AUDIT_LOG, AuditLog } from '../common/audit-context';
import { EVENT_OUTBOX, EventOutbox } from '../common/event-outbox';
import { boundedLru } from '../common/bounded-lru';
import { ApiException } from '../common/errors/api-exception';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import type { DatabaseConfig } from '../config/app-config';
import { Metrics } from '../observability/metrics';
import { isForeignKeyViolation } from './dialect';
import { GroupCommit, MAX_GROUP_SIZE, MAX_GROUPS_IN_FLIGHT } from './group-commit';
import { beforeCommit, repeatable } from './outage-wait';
import { sqliteGateOf } from './sqlite-gate';

/** PostgreSQL's channel of committed changes: every instance drops what it cached of them. */
export const CHANGES_CHANNEL = 'petstore_changes';

export type Row = ObjectLiteral & { id: number };

/** A row that changes: `version` starts at 1 and grows by one with each change (its `ETag`). */
export type VersionedRow = Row & { version: number };

export interface StoreOptions<E = never> {
  mutable?: boolean;
  /** Publishes each change as `<type>.created|updated|deleted`, with `data` the record as `answered`. */
  events?: { type: string; answered: (row: E) => object };
}

/** Whether this instance hears of every change to mutable tables (always, on SQLite's one process). */
export interface ChangeSync {
  live: boolean;
}

/** Where a change is made: in another module's transaction; for an API request, audited. */
export interface ChangeContext {
  transaction?: EntityManager;
  request?: object;
}

/** Work that must commit with a new row: how an idempotent create stores its answer. */
export type WithCreated<E> = (manager: EntityManager, created: E) => Promise<void>;

/** Columns a list is narrowed to (equality); an undefined value is no filter. */
export type PageFilter<E> = { [K in keyof E]?: E[K] | undefined };

type ReadCacheOptions = Pick<DatabaseConfig, 'readCacheSize' | 'readCacheMegabytes'>;

/** Work a transaction does last, before it commits: what it gathered on the way, in one statement. */
const lastWork = new WeakMap<EntityManager, Array<() => Promise<void>>>();

type Target = EntityTarget<ObjectLiteral>;
const gathered = new WeakMap<EntityManager, Map<Target, ObjectLiteral[]>>();

/** Rows never read back: in runTransaction's transaction, one INSERT done last (after `first`); else now. */
export async function insertLast(
  transaction: EntityManager,
  target: Target,
  rows: ObjectLiteral[],
  first?: (transaction: EntityManager) => Promise<unknown>,
): Promise<void> {
  const last = lastWork.get(transaction);
  let byTarget = gathered.get(transaction);
  const pending = byTarget?.get(target);
  if (pending) {
    pending.push(...rows);
    return;
  }
  const write = async () => {
    await first?.(transaction);
    await insertRows(transaction, target, rows);
  };
  if (!last) return write();
  if (!byTarget) gathered.set(transaction, (byTarget = new Map<Target, ObjectLiteral[]>()));
  byTarget.set(target, rows);
  last.push(write);
}

/** One plain multi-row INSERT of rows never read back: the insert builder was a tenth of a create's CPU. */
export async function insertRows(
  manager: EntityManager,
  target: Target,
  rows: ObjectLiteral[],
): Promise<void> {
  const metadata = manager.connection.getMetadata(target);
  const columns = Object.keys(rows[0]).map((key) => metadata.findColumnWithPropertyName(key)!);
  const names = columns.map((column) => `"${column.databaseName}"`).join(', ');
  const { driver } = manager.connection;
  for (let start = 0; start < rows.length; start += 100) {
    const chunk = rows.slice(start, start + 100);
    let n = 0;
    const tuples = chunk.map(() => `(${columns.map(() => driver.createParameter('', n++)).join(', ')})`);
    const values = chunk.flatMap((row): unknown[] =>
      columns.map(({ propertyName, transformer }): unknown =>
        transformer ? ApplyValueTransformers.transformTo(transformer, row[propertyName]) : row[propertyName],
      ),
    );
    await manager.query(`INSERT INTO "${metadata.tableName}" (${names}) VALUES ${tuples.join(', ')}`, values);
  }
}

/** Work to do once a transaction has committed, by the transaction that owes it. */
const afterCommit = new WeakMap<EntityManager, Array<() => void>>();
const onCommit = new WeakMap<EntityManager, Array<() => void>>();

/** Runs `work` once `transaction` (begun by runTransaction) has committed; never if it rolls back. */
export function whenCommitted(transaction: EntityManager, work: () => void): void {
  onCommit.get(transaction)?.push(work);
}

/** A cached row's estimated bytes: the object and its key, its strings as UTF-16. */
export function rowBytes(row: object): number {
  let bytes = 160;
  for (const value of Object.values(row)) if (typeof value === 'string') bytes += 2 * value.length;
  return bytes;
}

function entryBytes(entry: Row | Page<Row>): number {
  const { items } = entry as Page<Row>;
  if (!Array.isArray(items)) return rowBytes(entry);
  let bytes = 100;
  for (const row of items) bytes += rowBytes(row as object);
  return bytes;
}

interface PendingRow<E> {
  row: Omit<E, 'id'>;
  inTransaction?: WithCreated<E>;
}

/** A transaction that waits out a database blink and, on SQLite, holds the one connection. */
export function runTransaction<R>(
  connection: DataSource,
  work: (transaction: EntityManager) => Promise<R>,
): Promise<R> {
  let committed: Array<() => void> = [];
  const transaction = () =>
    beforeCommit(connection, (reachedCommit) =>
      connection.transaction(async (manager) => {
        const last: Array<() => Promise<void>> = [];
        lastWork.set(manager, last);
        onCommit.set(manager, (committed = []));
        const result = await work(manager);
        for (const done of last) await done();
        reachedCommit();
        return result;
      }),
    );
  const gate = sqliteGateOf(connection);
  const result = !gate
    ? transaction()
    : gate.exclusive(() =>
        transaction().catch(async (error: unknown) => {
          await settleSqliteTransaction(connection);
          throw error;
        }),
      );
  return result.then((value) => {
    for (const done of committed) done();
    return value;
  });
}

/**
 * After a failed COMMIT and ROLLBACK (a full or unwritable disk), TypeORM still counts a transaction open
 * on SQLite's one connection: the next would be a savepoint that never commits, acknowledged and lost.
 */
async function settleSqliteTransaction(connection: DataSource): Promise<void> {
  const { queryRunner: runner } = connection.driver as {
    queryRunner?: Pick<QueryRunner, 'query'> & { isTransactionActive: boolean; transactionDepth: number };
  };
  if (!runner?.isTransactionActive) return;
  await runner.query('ROLLBACK').catch(() => undefined);
  runner.isTransactionActive = false;
  runner.transactionDepth = 0;
}

/** Every module's table: exact read cache, keyset pages, grouped creates (docs/architecture.md). */
export class ResourceStore<E extends Row> {
  private readonly inserts = new GroupCommit<PendingRow<E>, E>(
    (pending) => this.insert(pending),
    MAX_GROUP_SIZE,
    MAX_GROUPS_IN_FLIGHT,
    // The group rolled back (a foreign key or one row's own work refused it): each row alone is safe.
    (error) => isForeignKeyViolation(error) || error instanceof ApiException,
  );
  readonly table: string;
  /** Changes to the table so far, here or heard of: a page's key holds the count. */
  private changes = 0;
  /** Rows cached before the last `invalidateAll` are under other keys. */
  private epoch = 0;

  constructor(
    private readonly repository: Repository<E>,
    private readonly cache: ReadCache,
    readonly options: StoreOptions<E> = {},
    private readonly sync: ChangeSync = { live: true },
    private readonly notice?: (transaction: EntityManager, table: string, id: number) => Promise<unknown>,
    private readonly audit?: AuditLog,
    private readonly outbox?: EventOutbox,
  ) {
    this.table = repository.metadata.tablePath;
    this.resource = repository.metadata.tableName.replaceAll('_', '-');
  }

  /** As audit events name it: the table in the collections' spelling (`store-orders`). */
  private readonly resource: string;

  /** The audit event of a change made for `request` (an API request), in the change's transaction. */
  private audited(transaction: EntityManager, id: number, outcome: number, request?: object) {
    if (!request || !this.audit) return undefined;
    return this.audit.record(transaction, [{ request, resource: this.resource, resourceId: id, outcome }]);
  }

  /** The events of rows `changed` (each after its change; a status change says the one before). */
  private published(
    transaction: EntityManager,
    kind: 'created' | 'updated' | 'deleted',
    changed: readonly { row: E; before?: E }[],
  ): Promise<void> | undefined {
    const { events } = this.options;
    if (!events || !this.outbox) return undefined;
    return this.outbox.append(
      transaction,
      changed.map(({ row, before }) => ({
        type: `${events.type}.${kind}`,
        data: {
          ...events.answered(row),
          version: (row as Partial<VersionedRow>).version ?? 1,
          ...(before && before.status !== row.status ? { previousStatus: before.status as unknown } : {}),
        },
      })),
    );
  }

  async get(id: number): Promise<E | null> {
    const key = this.rowKey(id);
    const cached = this.cached()?.get<E>('row', key);
    if (cached) return cached;
    const seen = this.changes;
    const row = await this.readRow(id);
    if (row) this.keep(key, row, seen);
    return row;
  }

  /** A page in ascending id order from `cursor` (400 if not one of this list's), with the next cursor. */
  async page(request: { limit: number; cursor?: string }, filter: PageFilter<E> = {}): Promise<Page<E>> {
    const where: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(filter) as [string, unknown][])
      if (value !== undefined) where[name] = value;
    const values = Object.values(where).map(String);
    const filterValue = values.length === 0 ? null : values.length === 1 ? values[0] : JSON.stringify(values);
    const afterId =
      request.cursor === undefined
        ? 0
        : decodeCursor(request.cursor, filterValue, Object.keys(filter).join(', ')).afterId;
    const key = `${this.table}#${this.changes}?${request.limit}&${afterId}&${Object.keys(where).join()}=${filterValue}`;
    const cached = this.cached()?.get<Page<E>>('page', key);
    if (cached) return cached;

    const seen = this.changes;
    if (afterId > 0) where.id = MoreThan(afterId);
    const rows = await repeatable(this.repository.manager.connection, () =>
      this.repository.find({
        where: where as FindOptionsWhere<E>,
        order: { id: 'ASC' } as FindOptionsOrder<E>,
        take: request.limit + 1,
      }),
    );
    if (rows.length <= request.limit) return { items: rows };
    const items = rows.slice(0, request.limit);
    const page = {
      items,
      nextCursor: encodeCursor({ afterId: items[items.length - 1].id, filter: filterValue }),
    };
    this.keep(key, page, seen);
    return page;
  }

  /** Drops what is cached of row `id` and every page of the table: it changed, here or elsewhere. */
  invalidate(id: number): void {
    this.changes++;
    this.cache.delete(this.rowKey(id));
  }

  invalidateAll(): void {
    this.changes++;
    this.epoch++;
  }

  private rowKey(id: number): string {
    return `${this.table}/${this.epoch}/${id}`;
  }

  /** The cache, unless the table changes and this instance may not hear of every change now. */
  private cached(): ReadCache | undefined {
    return this.options.mutable && !this.sync.live ? undefined : this.cache;
  }

  /** Unless a change overtook the read, or it ran inside a SQLite transaction (uncommitted rows). */
  private keep(key: string, entry: E | Page<E>, seen: number): void {
    if (this.changes !== seen || sqliteGateOf(this.repository.manager.connection)?.heldHere()) return;
    this.cached()?.set(key, entry);
  }

  create(row: Omit<E, 'id'>, inTransaction?: WithCreated<E>): Promise<E> {
    return this.inserts.add({ row, inTransaction });
  }

  /** Compare-and-set on the version seen: a row changed meanwhile is read and `check`ed again. */
  async update<V extends E & VersionedRow>(
    this: ResourceStore<V>,
    id: number,
    changes: Partial<Omit<V, 'id' | 'version'>>,
    check: (current: V) => void,
    { transaction, request }: ChangeContext = {},
  ): Promise<V | null> {
    if (!this.options.mutable) throw new Error(`${this.table} is not a mutable store`);
    const set = Object.entries(changes).filter(([, value]) => value !== undefined);
    const unchanged = (row: V) => set.every(([name, value]) => row[name] === value);
    if (transaction) {
      return this.change(
        id,
        check,
        async (manager, row) => (unchanged(row) ? row : this.compareAndSet(manager, row, set)),
        { transaction, request, outcome: 200 },
      );
    }
    let current = this.cached()?.get<V>('row', this.rowKey(id));
    for (let fromCache = current !== undefined; ; fromCache = false) {
      if (!fromCache) current = (await this.readRow(id)) ?? undefined;
      if (!current) return null;
      try {
        check(current);
      } catch (refusal) {
        if (fromCache) continue;
        throw refusal;
      }
      if (unchanged(current)) {
        if (fromCache) continue;
        return current;
      }
      const row = current;
      const written = await this.writeChange(async (manager) => {
        const changed = await this.compareAndSet(manager, row, set);
        if (changed) {
          await this.notice?.(manager, this.table, id);
          await this.audited(manager, id, 200, request);
          await this.published(manager, 'updated', [{ row: changed, before: row }]);
        }
        return changed;
      }, request !== undefined);
      if (written) {
        this.invalidate(id);
        return written;
      }
    }
  }

  private readRow(id: number): Promise<E | null> {
    return repeatable(this.repository.manager.connection, () =>
      this.repository.findOneBy({ id } as FindOptionsWhere<E>),
    );
  }

  /** Writes `set` onto `row` if it is still at `row.version`; null when it is not. */
  private async compareAndSet<V extends E & VersionedRow>(
    manager: EntityManager,
    row: V,
    set: [string, unknown][],
  ): Promise<V | null> {
    const values = { ...Object.fromEntries(set), version: row.version + 1 };
    const where = { id: row.id, version: row.version } as FindOptionsWhere<V>;
    const { affected } = await manager.update(this.repository.target, where, values as never);
    return affected === 1 ? { ...row, ...values } : null;
  }

  /** PostgreSQL: in a transaction, with its NOTIFY; SQLite: the one UPDATE, atomic on its own, unless recorded. */
  private writeChange<R>(write: (manager: EntityManager) => Promise<R>, audited: boolean): Promise<R> {
    const { manager } = this.repository;
    if (manager.connection.options.type !== 'postgres' && !(audited && this.audit) && !this.publishes)
      return write(manager);
    return this.write(write);
  }

  private get publishes(): boolean {
    return this.options.events !== undefined && this.outbox !== undefined;
  }

  /** Removes the row if `check` accepts it; false when none, 409 when others refer to it. */
  async delete(
    id: number,
    check: (current: E) => void = () => undefined,
    { request }: ChangeContext = {},
  ): Promise<boolean> {
    try {
      const deleted = await this.change(
        id,
        check,
        async (manager) => {
          await manager.delete(this.repository.target, { id });
          return true;
        },
        { request, outcome: 204 },
      );
      return deleted ?? false;
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new ApiException('still_referenced');
      throw error;
    }
  }

  /** `work` on the row, read under a lock and checked; what it changed is dropped once it commits. */
  private async change<R>(
    id: number,
    check: (current: E) => void,
    work: (transaction: EntityManager, row: E) => Promise<R | E>,
    { transaction: outer, request, outcome }: ChangeContext & { outcome: number },
  ): Promise<R | null> {
    if (!this.options.mutable) throw new Error(`${this.table} is not a mutable store`);
    const { target } = this.repository;
    const inTransaction = async (transaction: EntityManager) => {
      const postgres = transaction.connection.options.type === 'postgres';
      const row = await transaction.findOne(target, {
        where: { id } as FindOptionsWhere<E>,
        ...(postgres ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
      if (!row) return null;
      check(row);
      const result = await work(transaction, row);
      if (result === row) return result as R;
      await this.audited(transaction, id, outcome, request);
      await this.published(
        transaction,
        outcome === 204 ? 'deleted' : 'updated',
        outcome === 204 ? [{ row }] : [{ row: result as unknown as E, before: row }],
      );
      await this.notice?.(transaction, this.table, id);
      const owed = afterCommit.get(transaction);
      if (!owed) throw new Error('a change in a transaction that no ResourceStore began');
      owed.push(() => this.invalidate(id));
      return result as R;
    };
    return outer ? inTransaction(outer) : this.write(inTransaction);
  }

  /** Owed work runs even if the transaction failed: a COMMIT without an answer may have committed. */
  private async write<R>(work: (transaction: EntityManager) => Promise<R>): Promise<R> {
    let owed: Array<() => void> = [];
    try {
      return await runTransaction(this.repository.manager.connection, (manager) => {
        owed = [];
        afterCommit.set(manager, owed);
        return work(manager);
      });
    } finally {
      for (const done of owed) done();
    }
  }

  /** PostgreSQL hands ids out before commit: the advisory lock keeps them visible in order, as on SQLite. */
  private async insert(pending: PendingRow<E>[]): Promise<E[]> {
    const rows = pending.map((create) => create.row);
    const { manager, target } = this.repository;
    const created = (result: { identifiers: ObjectLiteral[] }) =>
      rows.map((row, index) => ({ id: Number(result.identifiers[index].id), ...row }) as unknown as E);
    const postgres = manager.connection.options.type === 'postgres';
    if (!postgres && !this.publishes && pending.every((create) => create.inTransaction === undefined))
      return created(await manager.insert(target, rows as never));
    return this.write(async (transaction) => {
      if (postgres) await transaction.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.table]);
      const entities = created(await transaction.insert(target, rows as never));
      for (const [index, create] of pending.entries())
        await create.inTransaction?.(transaction, entities[index]);
      await this.published(
        transaction,
        'created',
        entities.map((row) => ({ row })),
      );
      return entities;
    });
  }
}

export class ReadCache {
  private readonly entries: LRUCache<string, Row | Page<Row>> | undefined;

  constructor(
    options: ReadCacheOptions,
    private readonly metrics: Metrics = new Metrics(),
  ) {
    if (options.readCacheSize === 0) return;
    const max = options.readCacheMegabytes * 1024 * 1024;
    this.entries = boundedLru(options.readCacheSize, {}, { max, of: entryBytes });
  }

  get<T extends Row | Page<Row>>(kind: 'row' | 'page', key: string): T | undefined {
    const entry = this.entries?.get(key);
    this.metrics.readCache(kind, entry !== undefined);
    return entry as T | undefined;
  }

  set(key: string, entry: Row | Page<Row>): void {
    this.entries?.set(key, entry);
  }

  delete(key: string): void {
    this.entries?.delete(key);
  }

  clear(): void {
    this.entries?.clear();
  }

  get size(): number {
    return this.entries?.size ?? 0;
  }

  get bytes(): number {
    return this.entries?.calculatedSize ?? 0;
  }
}

export const DATABASE_CONFIG = Symbol('DATABASE_CONFIG');

@Injectable()
export class ResourceStores {
  private readonly cache: ReadCache;
  private readonly stores = new Map<string, ResourceStore<Row>>();
  private readonly sync: ChangeSync = { live: true };
  /** Tells other instances of a change (PostgreSQL, change-notices.ts). */
  notice?: (transaction: EntityManager, table: string, id: number) => Promise<unknown>;

  constructor(
    @Inject(DATABASE_CONFIG) options: ReadCacheOptions,
    @Optional() metrics: Metrics = new Metrics(),
    @Optional() @Inject(AUDIT_LOG) private readonly audit?: AuditLog,
    @Optional() @Inject(EVENT_OUTBOX) private readonly outbox?: EventOutbox,
  ) {
    this.cache = new ReadCache(options, metrics);
  }

  of<E extends Row>(repository: Repository<E>, options: StoreOptions<E> = {}): ResourceStore<E> {
    const table = repository.metadata.tablePath;
    let store = this.stores.get(table);
    if (!store) {
      store = new ResourceStore(
        repository,
        this.cache,
        options,
        this.sync,
        (transaction, changed, id) => this.notice?.(transaction, changed, id) ?? Promise.resolve(),
        this.audit,
        this.outbox,
      ) as unknown as ResourceStore<Row>;
      this.stores.set(table, store);
    }
    if (Boolean(store.options.mutable) !== Boolean(options.mutable))
      throw new Error(`the store of ${table} is opened as mutable and as not`);
    return store as unknown as ResourceStore<E>;
  }

  changed(table: string, id: number): void {
    this.stores.get(table)?.invalidate(id);
  }

  /** While false, tables that change are not cached (changes may be missed); either way theirs goes. */
  hearsChanges(live: boolean): void {
    this.sync.live = live;
    for (const store of this.stores.values()) if (store.options.mutable) store.invalidateAll();
  }

  /** For a table changed behind the stores' back (a bulk fix in SQL). */
  clearCache(): void {
    this.cache.clear();
  }
}
