import type { Pool } from 'pg';

export type AuthFailureReason = 'missing' | 'invalid' | 'revoked' | 'expired' | 'insufficient_scope';
export type RateLimitKind = 'per_key' | 'auth_failures';
export type IdempotencyConflictReason = 'in_flight' | 'body_mismatch';
export type ReadCacheKind = 'row' | 'page';

/** The no-op that runs with metrics off. */
export class Metrics {
  readonly enabled: boolean = false;
  requestStarted(): void {}
  requestEnded(_method: string, _route: string, _statusCode: number, _seconds: number): void {}
  authFailure(_reason: AuthFailureReason): void {}
  rateLimited(_limit: RateLimitKind): void {}
  idempotencyReplay(): void {}
  idempotencyConflict(_reason: IdempotencyConflictReason): void {}
  readCache(_kind: ReadCacheKind, _hit: boolean): void {}
  queryError(): void {}
  watchDatabase(_system: string, _pool?: Pool): void {}
  webhookAttempt(_ok: boolean, _seconds: number): void {}
  webhookDelivered(_secondsSinceCommit: number): void {}
  watchWebhooks(_backlog: () => Promise<number>): void {}
  render(): Promise<{ contentType: string; text: string }> {
    return Promise.resolve({ contentType: 'text/plain; charset=utf-8', text: '' });
  }
}
