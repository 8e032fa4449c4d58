import { LRUCache } from 'lru-cache';

/** What a bounded cache is told besides its bound (e.g. `ttl`). */
export type LruOptions<K extends string | number, V extends object> = Omit<
  LRUCache.Options<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation' | 'maxEntrySize'
>;

/**
 * An `lru-cache` holding at most `maxEntries` entries, the least recently used dropped first,
 * that reserves nothing up front. With its `max` option `lru-cache` allocates five arrays of
 * `max` slots at construction (keys, values, links both ways and a free list: up to 28 bytes per
 * slot, 2.8 MB for 100,000 entries), held for the process's life whether used or not; and the
 * heap V8 lets grow under load is a multiple of what is live (docs/performance.md, Memory).
 * Counted as `maxSize` with each entry of size 1, the same bound costs memory only for the
 * entries held.
 */
export function boundedLru<K extends string | number, V extends object>(
  maxEntries: number,
  options: LruOptions<K, V> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: maxEntries, sizeCalculation: () => 1 });
}

/**
 * An `lru-cache` bounded by the bytes its entries are estimated to hold (`size` of each, at
 * most `maxBytes` together) and by `maxEntries`, whichever is reached first, the least recently
 * used dropped first; nothing is reserved up front.
 */
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

  /** The estimated bytes held. */
  get bytes(): number {
    return this.cache.calculatedSize;
  }
}
