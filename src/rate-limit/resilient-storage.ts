import { Logger, LoggerService, OnModuleDestroy } from '@nestjs/common';
import { ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import { ThrottlerStorageRecord } from '@nestjs/throttler/dist/throttler-storage-record.interface';

const CONTEXT = 'RateLimit';

/** While the shared store is down, it is asked again at most this often. */
export const SHARED_STORE_RETRY_MS = 1000;

/**
 * Wraps the shared counter store (Redis) so that its outage neither takes the API down nor
 * lifts the limits: while it fails or is slow, requests are counted by this instance alone
 * (never "no limit", never a 5xx). The first failure is logged as a warning; the store is tried
 * again at most once a second, and shared counting resumes (logged) as soon as it answers.
 */
export class ResilientStorage implements ThrottlerStorage, OnModuleDestroy {
  /** When the shared store failed last; undefined while it works. */
  private downSince: number | undefined;
  private lastAttempt = 0;

  constructor(
    private readonly shared: ThrottlerStorage & Partial<OnModuleDestroy>,
    /** The app's logger, given here because the store is made (and may warn) before Nest's logger is set. */
    private readonly logger: Pick<LoggerService, 'warn' | 'log'> = new Logger(),
    private readonly timeoutMs = 250,
    private readonly local = new ThrottlerStorageService(),
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether requests are counted per instance for now. */
  get degraded(): boolean {
    return this.downSince !== undefined;
  }

  /** Starts in per-instance counting (the shared store did not answer at start). */
  markDown(reason: string): void {
    this.fail(new Error(reason));
  }

  /** Nest calls this on the storage provider: it closes the shared store's connection. */
  onModuleDestroy(): void {
    this.local.onApplicationShutdown();
    void this.shared.onModuleDestroy?.();
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    if (this.downSince !== undefined && now - this.lastAttempt < SHARED_STORE_RETRY_MS) {
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    }
    this.lastAttempt = now;
    let timer: NodeJS.Timeout | undefined;
    try {
      const record = await Promise.race([
        this.shared.increment(key, ttl, limit, blockDuration, throttlerName),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
      if (this.downSince !== undefined) {
        this.logger.log(
          `rate-limit store answers again after ${Math.round((this.now() - this.downSince) / 1000)} s: counting shared again`,
          CONTEXT,
        );
        this.downSince = undefined;
      }
      return record;
    } catch (error) {
      this.fail(error);
      return this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    } finally {
      clearTimeout(timer);
    }
  }

  private fail(error: unknown): void {
    this.lastAttempt = this.now();
    if (this.downSince !== undefined) return;
    this.downSince = this.lastAttempt;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn(
      `rate-limit store unavailable (${reason}): counting per instance until it answers again`,
      CONTEXT,
    );
  }
}
