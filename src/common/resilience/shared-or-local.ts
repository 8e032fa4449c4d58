import { Logger, LoggerService } from '@nestjs/common';

/** While the shared store is down, it is asked again at most this often. */
export const SHARED_STORE_RETRY_MS = 1000;

/**
 * Counting that survives an outage of the store it shares with other instances (Redis): each
 * call asks the shared store, and while it fails or is slow (over `timeoutMs`) the local
 * answer is used instead, so limits hold per instance (never "no limit", never a 5xx). The
 * first failure of an outage is one warning; the shared store is tried again at most once a
 * second, and its return is logged.
 */
export class SharedOrLocal {
  /** When the shared store failed last; undefined while it works. */
  private downSince: number | undefined;
  private lastAttempt = 0;

  constructor(
    /** What the log lines call the shared store, e.g. "rate-limit store". */
    private readonly name: string,
    private readonly context: string,
    /** The app's logger where the store is made (and may warn) before Nest's logger is set. */
    private readonly logger: Pick<LoggerService, 'warn' | 'log'> = new Logger(),
    private readonly timeoutMs = 250,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether calls are answered per instance for now. */
  get degraded(): boolean {
    return this.downSince !== undefined;
  }

  /** Starts in per-instance counting (the shared store did not answer at start). */
  markDown(reason: string): void {
    this.fail(new Error(reason));
  }

  async run<T>(shared: () => Promise<T>, local: () => Promise<T>): Promise<T> {
    const now = this.now();
    if (this.downSince !== undefined && now - this.lastAttempt < SHARED_STORE_RETRY_MS) return local();
    this.lastAttempt = now;
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        shared(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.timeoutMs} ms`)),
            this.timeoutMs,
          );
        }),
      ]);
      if (this.downSince !== undefined) {
        this.logger.log(
          `${this.name} answers again after ${Math.round((this.now() - this.downSince) / 1000)} s: counting shared again`,
          this.context,
        );
        this.downSince = undefined;
      }
      return result;
    } catch (error) {
      this.fail(error);
      return local();
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
      `${this.name} unavailable (${reason}): counting per instance until it answers again`,
      this.context,
    );
  }
}
