import { LRUCache } from 'lru-cache';
import { boundedLru } from '../common/bounded-lru';
import type { Page } from '../common/pagination/page';
import type { DatabaseConfig } from '../config/app-config';
import { Metrics } from '../observability/metrics';
import type { Row } from './rows';

export type ReadCacheOptions = Pick<DatabaseConfig, 'readCacheSize' | 'readCacheMegabytes'>;

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

/** Rows by id and whole pages of every store, in one bounded LRU (docs/architecture.md). */
export class ReadCache {
  /** None when `READ_CACHE_SIZE` is 0. */
  readonly entries: LRUCache<string, Row | Page<Row>> | undefined;

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
}

/**
 * One table's part of the cache. Exact: ids become visible in order (a full page never gains a
 * row), a change drops the table's row and every page of it, and a read that a change overtook
 * keeps nothing.
 */
export class TableCache {
  /** Changes to the table so far, here or heard of: a page's key holds the count. */
  private changes = 0;
  /** Rows cached before the last `dropAll` are under other keys. */
  private epoch = 0;

  constructor(
    private readonly table: string,
    private readonly cache: ReadCache,
    /** False while it may miss changes made elsewhere: then it keeps and answers nothing. */
    private readonly trusted: () => boolean,
  ) {}

  /** Taken before a read, handed to `keep` after it. */
  get seen(): number {
    return this.changes;
  }

  rowKey(id: number): string {
    return `${this.table}/${this.epoch}/${id}`;
  }

  pageKey(query: string): string {
    return `${this.table}#${this.changes}?${query}`;
  }

  get<T extends Row | Page<Row>>(kind: 'row' | 'page', key: string): T | undefined {
    return this.trusted() ? this.cache.get<T>(kind, key) : undefined;
  }

  keep(key: string, entry: Row | Page<Row>, seen: number): void {
    if (this.changes === seen && this.trusted()) this.cache.entries?.set(key, entry);
  }

  /** Row `id` changed, here or elsewhere: it goes, and every page of the table. */
  drop(id: number): void {
    this.changes++;
    this.cache.entries?.delete(this.rowKey(id));
  }

  dropAll(): void {
    this.changes++;
    this.epoch++;
  }
}
