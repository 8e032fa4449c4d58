import { LRUCache } from 'lru-cache';

/**
 * An `lru-cache` of at most `maxEntries`, and with `bytes` of at most `bytes.max` estimated
 * bytes, that reserves nothing up front: its `max` option would allocate five arrays of `max`
 * slots at once (2.8 MB for 100,000), used or not. Each entry counts at least
 * `bytes.max / maxEntries`, so that the one `maxSize` bounds both.
 */
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
