import { ApiException } from '../common/errors/api-exception';
import type { FailedAuthBudget } from '../auth/failed-auth-budget';
import { Counters } from './counters';

export const ABUSE_WINDOW_MS = 60_000;

/** Refused before any key lookup, so key guessing and unauthenticated floods cost the database nothing. */
export class AbuseLimiter implements FailedAuthBudget {
  constructor(
    private readonly counters: Counters,
    private readonly limit: number,
    private readonly windowMs = ABUSE_WINDOW_MS,
  ) {}

  async reserve(address: string): Promise<ApiException | undefined> {
    const spent = await this.counters.increment(counterKey(address), this.windowMs, this.limit, 0, 'abuse');
    if (spent.totalHits <= this.limit) return undefined;
    const retryAfter = Math.max(1, spent.timeToExpire);
    return new ApiException(
      'rate_limited',
      `Too many requests without a valid API key from this address. Retry after ${retryAfter} seconds.`,
      undefined,
      { 'Retry-After': String(retryAfter) },
    );
  }

  /** For a request whose key turned out valid: its unit back. */
  async refund(address: string): Promise<void> {
    await this.counters.refund(counterKey(address));
  }
}

function counterKey(address: string): string {
  return `petstore:abuse:${address}`;
}
