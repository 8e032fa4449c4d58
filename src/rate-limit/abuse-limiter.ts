import { ApiException } from '../common/errors/api-exception';
import type { FailedAuthBudget, Refund } from '../auth/failed-auth-budget';
import { Counters } from './counters';

const WINDOW_MS = 60_000;

/** Refused before any key lookup, so key guessing and unauthenticated floods cost the database nothing. */
export class AbuseLimiter implements FailedAuthBudget {
  constructor(
    private readonly counters: Counters,
    private readonly limit: number,
  ) {}

  async reserve(address: string): Promise<ApiException | Refund> {
    const key = `petstore:abuse:${address}`;
    const spent = await this.counters.increment(key, WINDOW_MS, this.limit, 0, 'abuse');
    if (spent.totalHits <= this.limit) return spent.refund;
    const retryAfter = Math.max(1, spent.timeToExpire);
    return new ApiException(
      'rate_limited',
      `Too many requests without a valid API key from this address. Retry after ${retryAfter} seconds.`,
      undefined,
      { 'Retry-After': String(retryAfter) },
    );
  }
}
