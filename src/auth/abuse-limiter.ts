import { Logger, OnModuleDestroy } from '@nestjs/common';
import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { ApiException } from '../common/errors/api-exception';
import { boundedLru } from '../common/memory/bounded-lru';
import { SharedOrLocal } from '../common/resilience/shared-or-local';

/** A fixed-window count: how many hits the window holds and when it ends. */
export interface WindowCount {
  count: number;
  resetInMs: number;
}

/** Per-key counters over fixed windows. */
export interface Counters {
  /** The count of the key's current window, without counting. */
  peek(key: string, windowMs: number): Promise<WindowCount>;
  /** Counts one hit; the window starts with the first hit. */
  hit(key: string, windowMs: number): Promise<WindowCount>;
  /** Releases a connection, if the counters hold one. */
  close?(): Promise<void>;
}

/** Counters in this process, bounded: the least recently used address is forgotten first. */
export class MemoryCounters implements Counters {
  private readonly windows: LRUCache<string, { count: number; endsAt: number }>;

  constructor(maxKeys = 100_000) {
    this.windows = boundedLru(maxKeys);
  }

  peek(key: string, windowMs: number, now = Date.now()): Promise<WindowCount> {
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return Promise.resolve({ count: 0, resetInMs: windowMs });
    return Promise.resolve({ count: window.count, resetInMs: window.endsAt - now });
  }

  hit(key: string, windowMs: number, now = Date.now()): Promise<WindowCount> {
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return Promise.resolve({ count: window.count, resetInMs: window.endsAt - now });
  }
}

const HIT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {n, redis.call('PTTL', KEYS[1])}`;
const PEEK = `return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}`;

type CountCommand = (key: string, windowMs: number) => Promise<[number, number]>;

/** Counters in Redis, shared by every instance: one atomic script per hit or peek. */
export class RedisCounters implements Counters {
  constructor(private readonly redis: Redis) {
    redis.defineCommand('petstoreCountHit', { numberOfKeys: 1, lua: HIT });
    redis.defineCommand('petstoreCountPeek', { numberOfKeys: 1, lua: PEEK });
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    const peek = (this.redis as unknown as Record<string, CountCommand>).petstoreCountPeek;
    return toWindow(await peek.call(this.redis, key, windowMs), windowMs);
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const hit = (this.redis as unknown as Record<string, CountCommand>).petstoreCountHit;
    return toWindow(await hit.call(this.redis, key, windowMs), windowMs);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

function toWindow([count, ttl]: [number, number], windowMs: number): WindowCount {
  return { count, resetInMs: ttl > 0 ? ttl : windowMs };
}

/**
 * Shared counters that never take the API down: while the shared store fails or is slow, this
 * instance counts on its own (never "no limit"; see SharedOrLocal).
 */
export class FallbackCounters implements Counters {
  private readonly fallback: SharedOrLocal;

  constructor(
    private readonly shared: Counters,
    private readonly local: Counters = new MemoryCounters(),
    timeoutMs = 250,
    now: () => number = Date.now,
  ) {
    this.fallback = new SharedOrLocal('abuse-limit store', 'AbuseLimit', new Logger(), timeoutMs, now);
  }

  peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.fallback.run(
      () => this.shared.peek(key, windowMs),
      () => this.local.peek(key, windowMs),
    );
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.fallback.run(
      () => this.shared.hit(key, windowMs),
      () => this.local.hit(key, windowMs),
    );
  }

  async close(): Promise<void> {
    await this.shared.close?.();
  }
}

export const ABUSE_WINDOW_MS = 60_000;

/**
 * The per-address budget of requests that carry no valid API key (none, malformed, unknown or
 * revoked). Over the budget such requests are refused before any key lookup, so key guessing
 * and unauthenticated floods cost neither the database nor the key store anything.
 */
export class AbuseLimiter implements OnModuleDestroy {
  constructor(
    private readonly counters: Counters | null,
    private readonly limit: number,
    private readonly windowMs = ABUSE_WINDOW_MS,
  ) {}

  get enabled(): boolean {
    return this.counters !== null;
  }

  async onModuleDestroy(): Promise<void> {
    await this.counters?.close?.();
  }

  /** The 429 `rate_limited` to answer when `address` has spent its budget, else undefined. */
  async refusal(address: string): Promise<ApiException | undefined> {
    if (!this.counters) return undefined;
    const { count, resetInMs } = await this.counters.peek(counterKey(address), this.windowMs);
    if (count < this.limit) return undefined;
    const retryAfter = Math.max(1, Math.ceil(resetInMs / 1000));
    return new ApiException(
      'rate_limited',
      `Too many requests without a valid API key from this address. Retry after ${retryAfter} seconds.`,
      undefined,
      { 'Retry-After': String(retryAfter) },
    );
  }

  /** Counts a request from `address` that carried no valid key. */
  async failed(address: string): Promise<void> {
    if (this.counters) await this.counters.hit(counterKey(address), this.windowMs);
  }
}

function counterKey(address: string): string {
  return `petstore:abuse:${address}`;
}

/** The limiter the configuration asks for: off, counting in this process, or in Redis (shared). */
export function createAbuseLimiter(options: {
  enabled: boolean;
  limit: number;
  redisUrl: string | null;
}): AbuseLimiter {
  if (!options.enabled) return new AbuseLimiter(null, options.limit);
  if (!options.redisUrl) return new AbuseLimiter(new MemoryCounters(), options.limit);
  // Loaded only with REDIS_URL: without it ioredis stays out of the process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const redis = new Redis(options.redisUrl, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
  });
  redis.on('error', () => undefined); // a failed count is reported once by FallbackCounters
  return new AbuseLimiter(new FallbackCounters(new RedisCounters(redis)), options.limit);
}
