import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  EntityManager,
  FindOptionsOrder,
  FindOptionsWhere,
  MoreThan,
  ObjectLiteral,
  Repository,
} from 'typeorm';
import { LRUCache } from 'lru-cache';
import { boundedLru } from '../common/bounded-lru';
import { ApiException } from '../common/errors/api-exception';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import { Metrics } from '../observability/metrics';
import { isForeignKeyViolation } from './dialect';
import { GroupCommit, MAX_GROUP_SIZE, MAX_GROUPS_IN_FLIGHT } from './group-commit';
import { beforeCommit, repeatable } from './outage-wait';
import { sqliteGateOf } from './sqlite-gate';

export type Row = ObjectLiteral & { id: number };

/** A row that changes: `version` starts at 1 and grows by one with each update (its `ETag`). */
export type VersionedRow = Row & { version: number };

export interface StoreOptions {
  /** Rows are updated and deleted: nothing of the table is cached, so no instance reads an old version. */
  mutable?: boolean;
}

/** Work that must commit with a new row: how an idempotent create stores its answer. */
export type WithCreated<E> = (manager: EntityManager, created: E) => Promise<void>;

/** Columns a list is narrowed to (equality); an undefined value is no filter. */
export type PageFilter<E> = { [K in keyof E]?: E[K] | undefined };

export interface ReadCacheOptions {
  readCacheSize: number;
  readCacheMegabytes: number;
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

/**
 * How every module reads and writes its table (docs/architecture.md): rows by id and keyset pages
 * through TypeORM, cached, and creates committed in groups. The caches are exact: a row of a table
 * that is not `mutable` never changes, and ids become visible in ascending order (`insert`), so a
 * page with more rows after it never changes either. A last page and a missing row are never kept.
 */
export class ResourceStore<E extends Row> {
  private readonly inserts = new GroupCommit<PendingRow<E>, E>(
    (pending) => this.insert(pending),
    MAX_GROUP_SIZE,
    MAX_GROUPS_IN_FLIGHT,
    // A foreign key refused one row of a group: the group rolled back, so each row alone is safe.
    isForeignKeyViolation,
  );
  private readonly table: string;
  private readonly cache: ReadCache | undefined;

  constructor(
    private readonly repository: Repository<E>,
    cache: ReadCache,
    readonly options: StoreOptions = {},
  ) {
    this.table = repository.metadata.tablePath;
    this.cache = options.mutable ? undefined : cache;
  }

  async get(id: number): Promise<E | null> {
    const key = `${this.table}/${id}`;
    const cached = this.cache?.get<E>('row', key);
    if (cached) return cached;
    const row = await repeatable(this.repository.manager.connection, () =>
      this.repository.findOneBy({ id } as FindOptionsWhere<E>),
    );
    if (row) this.cache?.set(key, row);
    return row;
  }

  /** A page in ascending id order from `cursor` (400 if not one of this list's), with the next cursor. */
  async page(request: { limit: number; cursor?: string }, filter: PageFilter<E> = {}): Promise<Page<E>> {
    const where: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(filter) as [string, unknown][]) {
      if (value !== undefined) where[name] = value;
    }
    const values = Object.values(where).map(String);
    const filterValue = values.length === 0 ? null : values.length === 1 ? values[0] : JSON.stringify(values);
    const afterId =
      request.cursor === undefined
        ? 0
        : decodeCursor(request.cursor, filterValue, Object.keys(filter).join(', ')).afterId;
    const key = `${this.table}?${request.limit}&${afterId}&${Object.keys(where).join()}=${filterValue}`;
    const cached = this.cache?.get<Page<E>>('page', key);
    if (cached) return cached;

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
    this.cache?.set(key, page);
    return page;
  }

  create(row: Omit<E, 'id'>, inTransaction?: WithCreated<E>): Promise<E> {
    return this.inserts.add({ row, inTransaction });
  }

  /**
   * Applies `changes` to the row when `matches` accepts it as it is (412 `precondition_failed` when
   * not), its version one up, in one transaction that no other change of the row interleaves
   * with; the row as it is now, or null when there is none.
   */
  update<V extends E & VersionedRow>(
    this: ResourceStore<V>,
    id: number,
    changes: Partial<Omit<V, 'id' | 'version'>>,
    matches: (row: V) => boolean,
  ): Promise<V | null> {
    // A property left out (undefined) stays as it is.
    const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    return this.change(id, matches, async (transaction, row) => {
      const updated = { ...row, ...set, version: row.version + 1 };
      const where = { id } as FindOptionsWhere<V>;
      await transaction.update(this.repository.target, where, { ...set, version: updated.version } as never);
      return updated;
    });
  }

  /**
   * Removes the row when `matches` accepts it (412 when not); false when there is none, 409
   * `still_referenced` when rows of other tables refer to it.
   */
  async delete(id: number, matches: (row: E) => boolean = () => true): Promise<boolean> {
    try {
      const deleted = await this.change(id, matches, async (transaction) => {
        await transaction.delete(this.repository.target, { id });
        return true;
      });
      return deleted ?? false;
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new ApiException('still_referenced');
      throw error;
    }
  }

  /** Reads the row under a lock (PostgreSQL: FOR UPDATE; SQLite: the gate), checks it, then does `work`. */
  private change<R>(
    id: number,
    matches: (row: E) => boolean,
    work: (transaction: EntityManager, row: E) => Promise<R>,
  ): Promise<R | null> {
    if (!this.options.mutable) throw new Error(`${this.table} is not a mutable store`);
    const { manager, target } = this.repository;
    const postgres = manager.connection.options.type === 'postgres';
    return this.write(async (transaction) => {
      const row = await transaction.findOne(target, {
        where: { id } as FindOptionsWhere<E>,
        ...(postgres ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
      if (!row) return null;
      if (!matches(row)) throw new ApiException('precondition_failed');
      return work(transaction, row);
    });
  }

  /**
   * `work` in one transaction, repeated within the outage wait while it cannot have committed; on
   * SQLite it holds the connection's gate (sqlite-gate.ts) so no other request's SQL joins it.
   */
  private write<R>(work: (transaction: EntityManager) => Promise<R>): Promise<R> {
    const { connection } = this.repository.manager;
    const transaction = () =>
      beforeCommit(connection, (reachedCommit) =>
        connection.transaction(async (manager) => {
          const result = await work(manager);
          reachedCommit();
          return result;
        }),
      );
    const gate = sqliteGateOf(connection);
    return gate ? gate.exclusive(transaction) : transaction();
  }

  /**
   * One INSERT per group, and with it, in one transaction, the work that must commit with its rows.
   * SQLite has one writer, so ids become visible in order; a group with no such work is one
   * statement, atomic without a transaction.
   * PostgreSQL hands ids out before commit, so inserts take the table's advisory lock on every
   * instance.
   */
  private async insert(pending: PendingRow<E>[]): Promise<E[]> {
    const rows = pending.map((create) => create.row);
    const { manager, target } = this.repository;
    const created = (result: { identifiers: ObjectLiteral[] }) =>
      rows.map((row, index) => ({ id: Number(result.identifiers[index].id), ...row }) as unknown as E);
    const postgres = manager.connection.options.type === 'postgres';
    if (!postgres && pending.every((create) => create.inTransaction === undefined))
      return created(await manager.insert(target, rows as never));
    return this.write(async (transaction) => {
      if (postgres) await transaction.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.table]);
      const entities = created(await transaction.insert(target, rows as never));
      for (const [index, create] of pending.entries())
        await create.inTransaction?.(transaction, entities[index]);
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

export const READ_CACHE_OPTIONS = Symbol('READ_CACHE_OPTIONS');

/** The store of each table, all on one read cache. */
@Injectable()
export class ResourceStores {
  private readonly cache: ReadCache;
  private readonly stores = new Map<string, ResourceStore<Row>>();

  constructor(
    @Inject(READ_CACHE_OPTIONS) options: ReadCacheOptions,
    @Optional() metrics: Metrics = new Metrics(),
  ) {
    this.cache = new ReadCache(options, metrics);
  }

  of<E extends Row>(repository: Repository<E>, options: StoreOptions = {}): ResourceStore<E> {
    const table = repository.metadata.tablePath;
    let store = this.stores.get(table);
    if (!store) {
      store = new ResourceStore(repository, this.cache, options) as unknown as ResourceStore<Row>;
      this.stores.set(table, store);
    }
    if (Boolean(store.options.mutable) !== Boolean(options.mutable))
      throw new Error(`the store of ${table} is opened as mutable and as not`);
    return store as unknown as ResourceStore<E>;
  }

  /** For a table changed behind the stores' back (a bulk fix in SQL). */
  clearCache(): void {
    this.cache.clear();
  }
}
