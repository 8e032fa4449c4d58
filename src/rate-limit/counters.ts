import { Logger, LoggerService, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import type { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import type Redis from 'ioredis';
import { LRUCache } from 'lru-cache';
import { boundedLru } from '../common/bounded-lru';
import { within } from '../common/within';

export interface Hit extends ThrottlerStorageRecord {
  /** Gives the hit back to the store that counted it, from its key's current window if that has one. */
  refund: () => Promise<void>;
}

/** Fixed windows from the first hit: a limit may be spent at one window's end and at the next's start. */
export interface Counters extends ThrottlerStorage {
  increment(key: string, ttl: number, limit: number, blockDuration: number, name: string): Promise<Hit>;
}

function hit(hits: number, windowMs: number, limit: number, blockedMs: number, refund: Hit['refund']): Hit {
  return {
    totalHits: hits,
    timeToExpire: Math.ceil(windowMs / 1000),
    isBlocked: blockedMs > 0 || hits > limit,
    timeToBlockExpire: Math.max(0, Math.ceil(blockedMs / 1000)),
    refund,
  };
}

export class MemoryCounters implements Counters {
  private readonly windows: LRUCache<string, { hits: number; endsAt: number; blockedUntil: number }>;

  constructor(
    maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.windows = boundedLru(maxKeys);
  }

  increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<Hit> {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window) {
      window = { hits: 0, endsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(key, window);
    } else if (window.endsAt <= now) {
      window.hits = 0;
      window.endsAt = now + ttl;
    }
    window.hits += 1;
    if (window.blockedUntil <= now && window.hits > limit && blockDuration > 0)
      window.blockedUntil = now + blockDuration;
    const refund = () => {
      if (window.endsAt > this.now() && window.hits > 0) window.hits -= 1;
      return Promise.resolve();
    };
    return Promise.resolve(hit(window.hits, window.endsAt - now, limit, window.blockedUntil - now, refund));
  }
}

const INCREMENT = `local hits = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
local blocked = redis.call('PTTL', KEYS[2])
if blocked <= 0 and hits > tonumber(ARGV[2]) and tonumber(ARGV[3]) > 0 then
  redis.call('SET', KEYS[2], 1, 'PX', ARGV[3]); blocked = tonumber(ARGV[3])
end
return {hits, ttl, blocked}`;
const REFUND = `if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end return {0, 0}`;

type Script = (...args: (string | number)[]) => Promise<[number, number, number?]>;
type WithScripts = Redis & { petstoreIncrement: Script; petstoreRefund: Script };

export class RedisCounters implements Counters {
  constructor(readonly redis: Redis) {
    redis.defineCommand('petstoreIncrement', { numberOfKeys: 2, lua: INCREMENT });
    redis.defineCommand('petstoreRefund', { numberOfKeys: 1, lua: REFUND });
  }

  async increment(key: string, ttl: number, limit: number, blockDuration: number): Promise<Hit> {
    const redis = this.redis as WithScripts;
    const [hits, windowMs, blocked = 0] = await redis.petstoreIncrement(
      key,
      `${key}:blocked`,
      ttl,
      limit,
      blockDuration,
    );
    return hit(hits, windowMs, limit, blocked, async () => {
      await redis.petstoreRefund(key);
    });
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

export const SHARED_STORE_RETRY_MS = 1000;

/** Never takes the API down: while the shared store fails or is slow, limits hold per instance. */
export class ResilientCounters implements Counters, OnModuleDestroy {
  private downSince: number | undefined;
  private lastAttempt = 0;

  constructor(
    private readonly shared: Counters & { close?(): Promise<void> },
    private readonly logger: Pick<LoggerService, 'warn' | 'log'> = new Logger(),
    private readonly timeoutMs = 250,
    private readonly local: Counters = new MemoryCounters(),
    private readonly now: () => number = Date.now,
  ) {}

  markDown(reason: string): void {
    this.fail(new Error(reason));
  }

  async onModuleDestroy(): Promise<void> {
    await this.shared.close?.();
  }

  async increment(...args: Parameters<Counters['increment']>): Promise<Hit> {
    const now = this.now();
    if (this.downSince !== undefined && now - this.lastAttempt < SHARED_STORE_RETRY_MS)
      return this.local.increment(...args);
    this.lastAttempt = now;
    try {
      const counted = await within(this.shared.increment(...args), this.timeoutMs);
      if (this.downSince !== undefined) {
        const seconds = Math.round((this.now() - this.downSince) / 1000);
        this.logger.log(
          `rate-limit store answers again after ${seconds} s: counting shared again`,
          'RateLimit',
        );
        this.downSince = undefined;
      }
      // Back to the shared store even if it is found down by now: this instance never counted it.
      const refund = () => within(counted.refund(), this.timeoutMs).catch((error) => this.fail(error));
      return { ...counted, refund };
    } catch (error) {
      this.fail(error);
      return this.local.increment(...args);
    }
  }

  private fail(error: unknown): void {
    this.lastAttempt = this.now();
    if (this.downSince !== undefined) return;
    this.downSince = this.lastAttempt;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(
      `rate-limit store unavailable (${reason}): counting per instance until it answers again`,
      'RateLimit',
    );
  }
}
