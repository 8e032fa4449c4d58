import type { PrometheusMetrics } from './prometheus-metrics';

export type AuthFailureReason = 'missing' | 'invalid' | 'revoked';
/** Which limit refused a request: the per-key budget, or the budget of requests without a valid key. */
export type RateLimitKind = 'per_key' | 'auth_failures';
export type IdempotencyConflictReason = 'in_flight' | 'body_mismatch';
export type ReadCacheName = 'pet' | 'page';

/** What a PostgreSQL pool says about itself (pg's Pool). */
export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  max: number;
}

/**
 * The service's counters, as the code that counts sees them. This class is what runs when
 * metrics are off (METRICS_PORT unset): every method does nothing, so the hooks in the guard,
 * the rate limiter, the idempotency handling and the read cache cost a call to an empty method.
 * `PrometheusMetrics` is the real one.
 */
export class Metrics {
  get enabled(): boolean {
    return false;
  }
  authFailure(_reason: AuthFailureReason): void {}
  rateLimited(_limit: RateLimitKind): void {}
  idempotencyReplay(): void {}
  idempotencyConflict(_reason: IdempotencyConflictReason): void {}
  readCache(_cache: ReadCacheName, _hit: boolean): void {}
  queryError(): void {}
}

/** `route` of requests that matched no route pattern (unknown paths, static files of /docs). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Whether metrics are on: `PrometheusMetrics`, told apart without loading prom-client. */
export function isPrometheus(metrics: Metrics): metrics is PrometheusMetrics {
  return metrics.enabled;
}

/**
 * The Prometheus metrics, loaded only when they are on: prom-client and the default collectors
 * stay out of the process otherwise (a smaller heap, a faster start).
 */
export function createPrometheusMetrics(): PrometheusMetrics {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PrometheusMetrics } = require('./prometheus-metrics') as typeof import('./prometheus-metrics');
  return new PrometheusMetrics();
}
