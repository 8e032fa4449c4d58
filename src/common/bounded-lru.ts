import { LRUCache } from 'lru-cache';

/** Not lru-cache's `max`: it allocates five arrays of `max` slots up front (2.8 MB for 100,000). */
export function boundedLru<K extends string | number, V extends object>(
  maxEntries: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
  bytes?: { max: number; of: (value: V) => number },
): LRUCache<K, V> {
  if (!bytes) return new LRUCache<K, V>({ ...options, maxSize: maxEntries, sizeCalculation: () => 1 });
  const least = Math.ceil(bytes.max / maxEntries);
  return new LRUCache<K, V>({
    ...options,
    maxSize: Math.floor(bytes.max),
    sizeCalculation: (value) => Math.max(least, Math.ceil(bytes.of(value))),
  });
}
