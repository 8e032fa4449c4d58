import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

interface Counter {
  hits: number;
  /** When the current window ends (ms since the epoch). */
  windowEndsAt: number;
  /** Until when the key is refused, once it went over the limit (0: not blocked). */
  blockedUntil: number;
}

/**
 * The per-key counters of this instance: a fixed window per key, as the Redis store counts
 * (INCR, and an expiry set by the window's first hit), so that the limit behaves the same with
 * and without `REDIS_URL`. Over the limit, a key is refused for `blockDuration`.
 *
 * Constant work per request. @nestjs/throttler's own in-memory store keeps one timestamp per
 * hit and filters them all on every request: its cost grows with the hits a window allows.
 * A fixed window lets a client spend its limit at the end of one window and again at the start
 * of the next, as with Redis.
 */
export class WindowCounters implements ThrottlerStorage {
  private readonly counters = new Map<string, Counter>();
  private nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** How many keys are counted now (expired ones are dropped once a minute at most). */
  get size(): number {
    return this.counters.size;
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now, ttl);
    const id = `${key}:${throttlerName}`;
    let counter = this.counters.get(id);
    if (counter === undefined) {
      counter = { hits: 0, windowEndsAt: now + ttl, blockedUntil: 0 };
      this.counters.set(id, counter);
    } else if (counter.windowEndsAt <= now) {
      counter.hits = 0;
      counter.windowEndsAt = now + ttl;
    }
    counter.hits += 1;
    let isBlocked = counter.blockedUntil > now;
    if (!isBlocked && counter.hits > limit) {
      counter.blockedUntil = now + blockDuration;
      isBlocked = true;
    }
    return Promise.resolve({
      totalHits: counter.hits,
      timeToExpire: Math.ceil((counter.windowEndsAt - now) / 1000),
      isBlocked,
      timeToBlockExpire: isBlocked ? Math.ceil((counter.blockedUntil - now) / 1000) : 0,
    });
  }

  /** Drops the counters whose window and block are both over. */
  private sweep(now: number, ttl: number): void {
    for (const [id, counter] of this.counters) {
      if (counter.windowEndsAt <= now && counter.blockedUntil <= now) this.counters.delete(id);
    }
    this.nextSweep = now + Math.max(ttl, 1000);
  }
}
