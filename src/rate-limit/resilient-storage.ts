import { Logger, LoggerService, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';
import { SharedOrLocal } from '../common/resilience/shared-or-local';
import { WindowCounters } from './window-counters';

/**
 * Wraps the shared counter store (Redis) of the per-key limit so that its outage neither takes
 * the API down nor lifts the limits: while it fails or is slow, requests are counted by this
 * instance alone (see SharedOrLocal).
 */
export class ResilientStorage implements ThrottlerStorage, OnModuleDestroy {
  private readonly fallback: SharedOrLocal;

  constructor(
    private readonly shared: ThrottlerStorage & Partial<OnModuleDestroy>,
    /** The app's logger, given here because the store is made (and may warn) before Nest's logger is set. */
    logger: Pick<LoggerService, 'warn' | 'log'> = new Logger(),
    timeoutMs = 250,
    private readonly local: ThrottlerStorage = new WindowCounters(),
    now: () => number = Date.now,
  ) {
    this.fallback = new SharedOrLocal('rate-limit store', 'RateLimit', logger, timeoutMs, now);
  }

  /** Whether requests are counted per instance for now. */
  get degraded(): boolean {
    return this.fallback.degraded;
  }

  /** Starts in per-instance counting (the shared store did not answer at start). */
  markDown(reason: string): void {
    this.fallback.markDown(reason);
  }

  /** Nest calls this on the storage provider: it closes the shared store's connection. */
  onModuleDestroy(): void {
    void this.shared.onModuleDestroy?.();
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    return this.fallback.run(
      () => this.shared.increment(key, ttl, limit, blockDuration, throttlerName),
      () => this.local.increment(key, ttl, limit, blockDuration, throttlerName),
    );
  }
}
