import { hash } from 'node:crypto';
import { Injectable, Logger, Optional } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf } from '../auth/caller';
import { ApiException, invalidField } from '../common/errors/api-exception';
import { IDEMPOTENCY_KEY_FORMAT, IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER } from '../common/openapi/headers';
import { resourceLocation } from '../common/resource-location';
import { requestIdOf } from '../http/request-log';
import { Transactions } from '../database/transactions';
import { UnitOfWork } from '../database/unit-of-work';
import { Metrics } from '../observability/metrics';
import { IdempotencyService, LEASE_RENEWAL_MS, StoredResponse } from './idempotency.service';

export type RecordResponse = (work: UnitOfWork, response: StoredResponse) => Promise<void>;

export function requestDigest(body: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
      );
    return value;
  };
  return hash('sha256', JSON.stringify(canonical(body ?? null)), 'hex');
}

/** Called by handlers after guard and pipes, so only valid requests reserve keys; no interceptor (rxjs). */
@Injectable()
export class IdempotentRequests {
  private readonly logger = new Logger('Idempotency');

  constructor(
    private readonly idempotency: IdempotencyService,
    private readonly transactions: Transactions,
    @Optional() private readonly metrics: Metrics = new Metrics(),
  ) {}

  /** `record` stores the answer in the operation's transaction: the key is "done" exactly when it commits. */
  async run<T>(
    request: Request,
    response: Response,
    operation: (record?: RecordResponse) => Promise<T>,
  ): Promise<T> {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return operation();
    const match = typeof header === 'string' ? IDEMPOTENCY_KEY_FORMAT.exec(header) : null;
    const key = match ? (match[1] ?? match[2]) : undefined;
    const owner = callerOf(request)?.owner;
    if (key === undefined || owner === undefined)
      throw invalidField(
        IDEMPOTENCY_KEY_HEADER,
        'Idempotency-Key must be one string of 1 to 255 visible ASCII characters',
      );
    const claim = await this.idempotency
      .claim(owner, key, requestDigest(request.body))
      .catch((error: unknown) => {
        const code = error instanceof ApiException ? error.code : undefined;
        if (code === 'idempotency_conflict') this.metrics.idempotencyConflict('in_flight');
        if (code === 'idempotency_key_reused') this.metrics.idempotencyConflict('body_mismatch');
        throw error;
      });
    if (claim.kind === 'replay') {
      this.metrics.idempotencyReplay();
      response.status(claim.response.statusCode).setHeader(REPLAYED_HEADER, 'true');
      if (claim.response.location) response.location(claim.response.location);
      return claim.response.body as T;
    }
    // A failed renewal is retried at the next tick; a claim lost meanwhile fails `complete`.
    const renewal = setInterval(
      () => void this.idempotency.renew(claim.claimed).catch(() => undefined),
      LEASE_RENEWAL_MS,
    ).unref();
    return operation((work, stored) => this.idempotency.complete(claim.claimed, stored, work.manager))
      .finally(() => clearInterval(renewal))
      .catch(async (error: unknown) => {
        // Had the operation committed after all, the key is "done" and stays: release spares it.
        await this.idempotency.release(claim.claimed).catch((releaseError: unknown) => {
          const reason = releaseError instanceof Error ? releaseError.message : String(releaseError);
          this.logger.warn(
            { reqId: requestIdOf(request) },
            `could not release an Idempotency-Key after a failed request (retrying in the background): ${reason}`,
          );
        });
        throw error;
      });
  }

  /** `insert` in a unit of work for the request; with a key, its answer commits with the row. */
  create<E extends { id: number }, B>(
    request: Request,
    response: Response,
    collection: string,
    insert: (work: UnitOfWork) => Promise<E>,
    toBody: (created: E) => B,
  ): Promise<B> {
    return this.run(request, response, async (record) => {
      const created = await this.transactions.run(async (work) => {
        const entity = await insert(work);
        await record?.(work, {
          statusCode: response.statusCode,
          body: toBody(entity),
          location: resourceLocation(collection, entity.id),
        });
        return entity;
      }, request);
      response.location(resourceLocation(collection, created.id));
      return toBody(created);
    });
  }
}
