import { LRUCache } from 'lru-cache';

/** What a bounded cache is told besides its bound (e.g. `ttl`). */
export type LruOptions<K extends string | number, V extends object> = Omit<
  LRUCache.Options<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation' | 'maxEntrySize'
>;

/**
 * An `lru-cache` of at most `maxEntries` that reserves nothing up front: its `max` option would
 * allocate five arrays of `max` slots at once (2.8 MB for 100,000), used or not.
 */
export function boundedLru<K extends string | number, V extends object>(
  maxEntries: number,
  options: LruOptions<K, V> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: maxEntries, sizeCalculation: () => 1 });
}

/** An `lru-cache` bounded by `maxEntries` and by the bytes its entries are estimated to hold. */
export class ByteBoundedLru<K extends string | number, V extends object> {
  private readonly cache: LRUCache<K, V>;

  constructor(
    private readonly maxEntries: number,
    maxBytes: number,
    size: (value: V, key: K) => number,
  ) {
    this.cache = new LRUCache<K, V>({
      maxSize: maxBytes,
      sizeCalculation: (value, key) => Math.max(1, Math.ceil(size(value, key))),
    });
  }

  get(key: K): V | undefined {
    return this.cache.get(key);
  }

  /** Keeps the entry unless it alone is larger than the byte bound. */
  set(key: K, value: V): void {
    this.cache.set(key, value);
    if (this.cache.size > this.maxEntries) this.cache.pop();
  }

  delete(key: K): void {
    this.cache.delete(key);
  }

  clear(): void {
    this.cache.clear();
  }

  get size(): number {
    return this.cache.size;
  }

  get bytes(): number {
    return this.cache.calculatedSize;
  }
}
