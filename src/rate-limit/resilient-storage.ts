import { Logger, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

/**
 * Wraps a shared counter store so that its outage never takes the API down: a failed or slow
 * count lets the request through (fail open) and is logged at most once a minute.
 */
export class ResilientStorage implements ThrottlerStorage, OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private lastWarning = 0;

  constructor(
    private readonly inner: ThrottlerStorage & Partial<OnModuleDestroy>,
    private readonly timeoutMs = 250,
  ) {}

  /** Nest calls this on the storage provider: it closes the inner store's connection. */
  onModuleDestroy(): void {
    void this.inner.onModuleDestroy?.();
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.inner.increment(key, ttl, limit, blockDuration, throttlerName),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
    } catch (error) {
      const now = Date.now();
      if (now - this.lastWarning > 60_000) {
        this.lastWarning = now;
        this.logger.warn(`rate-limit store unavailable, not limiting: ${(error as Error).message}`);
      }
      return { totalHits: 0, timeToExpire: Math.ceil(ttl / 1000), isBlocked: false, timeToBlockExpire: 0 };
    } finally {
      clearTimeout(timer);
    }
  }
}
