export type AuthFailureReason = 'missing' | 'invalid' | 'revoked';
/** Which limit refused a request: the per-key budget, or the budget of requests without a valid key. */
export type RateLimitKind = 'per_key' | 'auth_failures';
export type IdempotencyConflictReason = 'in_flight' | 'body_mismatch';
export type ReadCacheKind = 'row' | 'page';

/** What a PostgreSQL pool says about itself (pg's Pool). */
export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  max: number;
}

/** `route` of requests that matched no route pattern (unknown paths, static files of /docs). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The service's counters as the code that counts sees them. This class is what runs with
 * metrics off (METRICS_PORT unset): every method does nothing. `PrometheusMetrics` is the real one.
 */
export class Metrics {
  get enabled(): boolean {
    return false;
  }
  requestStarted(): void {}
  requestEnded(_method: string, _route: string, _statusCode: number, _seconds: number): void {}
  authFailure(_reason: AuthFailureReason): void {}
  rateLimited(_limit: RateLimitKind): void {}
  idempotencyReplay(): void {}
  idempotencyConflict(_reason: IdempotencyConflictReason): void {}
  readCache(_kind: ReadCacheKind, _hit: boolean): void {}
  queryError(): void {}
  /** The database the query errors are counted for, and the PostgreSQL pool to report on. */
  watchDatabase(_system: string, _pool?: () => PoolStats): void {}
  /** The metrics in the Prometheus text format. */
  render(): Promise<{ contentType: string; text: string }> {
    return Promise.resolve({ contentType: 'text/plain; charset=utf-8', text: '' });
  }
}
