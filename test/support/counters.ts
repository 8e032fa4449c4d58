import type { Counters } from '../../src/rate-limit/counters';

/** The hits `key` has in its current window: one more counted and given back at once. */
export async function hitsOf(counters: Counters, key: string): Promise<number> {
  const hit = await counters.increment(key, 60_000, Number.MAX_SAFE_INTEGER, 0, 'test');
  await hit.refund();
  return hit.totalHits - 1;
}
