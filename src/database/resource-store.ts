import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityTarget, Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
import { Metrics } from '../observability/metrics';
import { Connections } from './connections';
import { isForeignKeyViolation } from './dialect';
import { ReadCache, ReadCacheOptions, TableCache } from './read-cache';
import { Row, RowShape } from './rows';
import type { UnitOfWork } from './unit-of-work';

/** A row that changes: `version` starts at 1 and grows by one with each change (its `ETag`). */
export type VersionedRow = Row & { version: number };

export interface StoreOptions<E = never> {
  mutable?: boolean;
  /** Publishes each change as `<type>.created|updated|deleted`, with `data` the record as `answered`. */
  events?: { type: string; answered: (row: E) => object };
}

/** Columns a list is narrowed to (equality); an undefined value is no filter. */
export type PageFilter<E> = { [K in keyof E]?: E[K] | undefined };

/** What a change sets: fixed values, or values made from the row as it is. */
export type Changes<V> =
  Partial<Omit<V, 'id' | 'version'>> | ((current: V) => Partial<Omit<V, 'id' | 'version'>>);

/** Every module's table: exact read cache, keyset pages, writes in a unit of work (docs/architecture.md). */
export class ResourceStore<E extends Row> {
  readonly table: string;
  /** As audit events name it: the table in the collections' spelling (`store-orders`). */
  private readonly resource: string;
  private readonly shape: RowShape<E>;
  private readonly target: EntityTarget<E>;
  private readonly connections: Connections;
  private readonly drop = (id: number) => this.cache.drop(id);

  constructor(
    repository: Repository<E>,
    readonly cache: TableCache,
    readonly options: StoreOptions<E>,
  ) {
    this.target = repository.target;
    this.connections = Connections.of(repository.manager.connection);
    this.shape = this.connections.shape(repository.target);
    this.table = this.shape.table;
    this.resource = repository.metadata.tableName.replaceAll('_', '-');
  }

  /** The row as committed (cached), or as `work`'s transaction sees it. */
  async get(id: number, work?: UnitOfWork): Promise<E | null> {
    if (work) return this.first(await work.arrays(this.shape.byId(false), [id]));
    const key = this.cache.rowKey(id);
    const cached = this.cache.get<E>('row', key);
    if (cached) return cached;
    const seen = this.cache.seen;
    const row = this.first(
      await this.connections.repeatable(() => this.connections.reads.arrays(this.shape.byId(false), [id])),
    );
    if (row) this.cache.keep(key, row, seen);
    return row;
  }

  /** A page in ascending id order from `cursor` (400 if not one of this list's), with the next cursor. */
  async page(request: { limit: number; cursor?: string }, filter: PageFilter<E> = {}): Promise<Page<E>> {
    const where = Object.entries(filter).filter(([, value]) => value !== undefined) as [string, unknown][];
    const values = where.map(([, value]) => String(value));
    const filterValue = values.length === 0 ? null : values.length === 1 ? values[0] : JSON.stringify(values);
    const key = this.cache.pageKey(
      `${request.limit}&${request.cursor ?? ''}&${where.map(([name]) => name).join()}=${filterValue}`,
    );
    const cached = this.cache.get<Page<E>>('page', key);
    if (cached) return cached;
    const seen = this.cache.seen;
    const page = await this.connections.page(this.target, where, {
      ...request,
      filter: filterValue,
      filterName: Object.keys(filter).join(', '),
    });
    if (page.nextCursor !== undefined) this.cache.keep(key, page, seen);
    return page;
  }

  /** Inserts the row in `work`'s transaction; audited and published with it. */
  async create(row: Omit<E, 'id'>, work: UnitOfWork): Promise<E> {
    const names = Object.keys(row);
    const values = names.map((name) => this.shape.stored(name, (row as Record<string, unknown>)[name]));
    const created = { id: await work.insert(this.shape, names, values), ...row } as E;
    work.audit(this.resource, created.id, 201);
    this.publish(work, 'created', created);
    return created;
  }

  /**
   * Sets `changes` on row `id` where `check` accepts it as it is (a compare-and-set on its version,
   * under its lock); null when there is none. A change that changes nothing writes nothing.
   */
  async update<V extends E & VersionedRow>(
    this: ResourceStore<V>,
    id: number,
    changes: Changes<V>,
    check: (current: V) => void,
    work: UnitOfWork,
  ): Promise<V | null> {
    this.mutableOnly();
    let current = this.cache.get<V>('row', this.cache.rowKey(id));
    for (let fresh = current === undefined, tried = 0; ; fresh = true) {
      if (fresh) current = (await work.locked(this.shape, id)) ?? undefined;
      if (!current) return null;
      // Another unit of the transaction may change it between the read and the write; never the same version twice.
      if (current.version <= tried)
        throw new Error(`${this.table} ${id} stays at version ${current.version}`);
      try {
        check(current);
      } catch (refusal) {
        if (fresh) throw refusal;
        continue; // the cached row may be older than the one in the database
      }
      const set = Object.entries(typeof changes === 'function' ? changes(current) : changes).filter(
        ([, value]) => value !== undefined,
      );
      if (set.every(([name, value]) => current![name] === value)) {
        if (fresh) return current;
        continue;
      }
      // 409 past 2^53 − 1, where JSON's numbers (and the ETag) stop being exact.
      const version = current.version + 1;
      if (!Number.isSafeInteger(version)) throw new ApiException('version_limit_reached');
      const names = set.map(([name]) => name);
      const values = set.map(([name, value]) => this.shape.stored(name, value));
      if (
        (await work.compareAndSet(this.shape, names, values, { id, version, old: current.version })) === 1
      ) {
        const updated = { ...current, ...Object.fromEntries(set), version } as V;
        this.noteChange(work, id, 200);
        this.publish(work, 'updated', updated, current);
        return updated;
      }
      if (fresh) tried = current.version;
    }
  }

  /** Removes the row if `check` accepts it; false when none, 409 when others refer to it. */
  async delete(id: number, check: (current: E) => void, work: UnitOfWork): Promise<boolean> {
    this.mutableOnly();
    const row = await work.locked(this.shape, id);
    if (!row) return false;
    check(row);
    try {
      await work.change(`DELETE FROM ${this.shape.name} WHERE "id" = ?`, [id]);
    } catch (error) {
      if (isForeignKeyViolation(error)) throw new ApiException('still_referenced');
      throw error;
    }
    this.noteChange(work, id, 204);
    this.publish(work, 'deleted', row);
    return true;
  }

  private noteChange(work: UnitOfWork, id: number, outcome: number): void {
    work.changed(this.table, id, this.drop);
    work.audit(this.resource, id, outcome);
  }

  /** The event of a change: the record as answered after it, its version, and a status it left. */
  private publish(work: UnitOfWork, kind: 'created' | 'updated' | 'deleted', row: E, before?: E): void {
    const { events } = this.options;
    if (!events || !work.publishes) return;
    const previous =
      before && before.status !== row.status ? { previousStatus: before.status as unknown } : {};
    work.publish({
      type: `${events.type}.${kind}`,
      data: { ...events.answered(row), version: (row as Partial<VersionedRow>).version ?? 1, ...previous },
    });
  }

  private first(rows: unknown[][]): E | null {
    return rows.length === 0 ? null : this.shape.values(rows[0]);
  }

  private mutableOnly(): void {
    if (!this.options.mutable) throw new Error(`${this.table} is not a mutable store`);
  }
}

export const DATABASE_CONFIG = Symbol('DATABASE_CONFIG');

@Injectable()
export class ResourceStores {
  private readonly cache: ReadCache;
  private readonly stores = new Map<string, ResourceStore<Row>>();
  /** Whether this instance hears of every change to mutable tables (always, on SQLite's one process). */
  private live = true;

  constructor(
    @Inject(DATABASE_CONFIG) options: ReadCacheOptions,
    @Optional() metrics: Metrics = new Metrics(),
  ) {
    this.cache = new ReadCache(options, metrics);
  }

  of<E extends Row>(repository: Repository<E>, options: StoreOptions<E> = {}): ResourceStore<E> {
    const table = repository.metadata.tablePath;
    let store = this.stores.get(table);
    if (!store) {
      const cache = new TableCache(table, this.cache, () => !options.mutable || this.live);
      store = new ResourceStore(repository, cache, options) as unknown as ResourceStore<Row>;
      this.stores.set(table, store);
    }
    if (Boolean(store.options.mutable) !== Boolean(options.mutable))
      throw new Error(`the store of ${table} is opened as mutable and as not`);
    return store as unknown as ResourceStore<E>;
  }

  changed(table: string, id: number): void {
    this.stores.get(table)?.cache.drop(id);
  }

  /** While false, tables that change are not cached (changes may be missed); either way theirs goes. */
  hearsChanges(live: boolean): void {
    this.live = live;
    for (const store of this.stores.values()) if (store.options.mutable) store.cache.dropAll();
  }

  /** For a table changed behind the stores' back (a bulk fix in SQL). */
  clearCache(): void {
    this.cache.entries?.clear();
  }
}
