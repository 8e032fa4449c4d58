import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThanOrEqual, Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { IdempotencyRecordEntity } from './idempotency-record.entity';

/** How long a key is remembered (IETF httpapi idempotency-key draft: at least a day is usual). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-flight record older than this was left by a request that died (a crashed process). */
export const IN_FLIGHT_LEASE_MS = 60 * 1000;
const CLEANUP_INTERVAL_MS = 10 * 60 * 1000;

export interface StoredResponse {
  statusCode: number;
  body: unknown;
  location: string | null;
}

export type Claim = { kind: 'new' } | { kind: 'replay'; response: StoredResponse };

/**
 * Idempotency-Key records, in the database so every instance sees them. `claim` either
 * reserves a key for a new request (a unique index decides between concurrent ones) or says
 * what to answer instead: the stored response, 409 while the first request is in flight, 422
 * when the key was used with another body.
 */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private cleanup: NodeJS.Timeout | undefined;

  constructor(
    @InjectRepository(IdempotencyRecordEntity) private readonly records: Repository<IdempotencyRecordEntity>,
  ) {}

  onModuleInit(): void {
    this.cleanup = setInterval(() => void this.deleteExpired(), CLEANUP_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.cleanup);
  }

  async deleteExpired(now = Date.now()): Promise<number> {
    try {
      const result = await this.records.delete({ expiresAt: LessThanOrEqual(now) });
      return result.affected ?? 0;
    } catch (error) {
      this.logger.warn(`could not delete expired idempotency keys: ${(error as Error).message}`);
      return 0;
    }
  }

  async claim(owner: string, idempotencyKey: string, requestHash: string, now = Date.now()): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.records.insert({
          owner,
          idempotencyKey,
          requestHash,
          state: 'in_flight',
          statusCode: null,
          responseBody: null,
          location: null,
          createdAt: now,
          expiresAt: now + IDEMPOTENCY_TTL_MS,
        });
        return { kind: 'new' };
      } catch (insertError) {
        const existing = await this.records.findOneBy({ owner, idempotencyKey });
        if (!existing) {
          if (attempt === 2) throw insertError;
          continue; // deleted in between: try again
        }
        const stale =
          existing.expiresAt <= now ||
          (existing.state === 'in_flight' && now - existing.createdAt > IN_FLIGHT_LEASE_MS);
        if (stale) {
          await this.records.delete({ id: existing.id, createdAt: existing.createdAt });
          continue;
        }
        if (existing.requestHash !== requestHash) {
          throw new ApiException('idempotency_key_reused');
        }
        if (existing.state === 'in_flight') {
          throw new ApiException('idempotency_conflict');
        }
        return {
          kind: 'replay',
          response: {
            statusCode: existing.statusCode ?? 200,
            body: JSON.parse(existing.responseBody ?? 'null') as unknown,
            location: existing.location,
          },
        };
      }
    }
    throw new ApiException('idempotency_conflict');
  }

  async complete(owner: string, idempotencyKey: string, response: StoredResponse): Promise<void> {
    await this.records.update(
      { owner, idempotencyKey, state: 'in_flight' },
      {
        state: 'done',
        statusCode: response.statusCode,
        responseBody: JSON.stringify(response.body),
        location: response.location,
      },
    );
  }

  /** The request failed: forget the key, so that a retry is processed anew. */
  async release(owner: string, idempotencyKey: string): Promise<void> {
    await this.records.delete({ owner, idempotencyKey, state: 'in_flight' });
  }
}
