import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, LessThanOrEqual, Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { databaseOutageCause } from '../database/outage';
import { Connections } from '../database/connections';
import { IdempotencyRecordEntity } from './idempotency-record.entity';

/** The IETF draft suggests at least a day. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** Renewed every `LEASE_RENEWAL_MS` while its request runs: a crashed instance's claims free within this. */
export const IN_FLIGHT_LEASE_MS = 3000;
export const LEASE_RENEWAL_MS = 1000;
const CLEANUP_INTERVAL_MS = 10 * 60 * 1000;
const RELEASE_RETRY_MS = 250;

export interface StoredResponse {
  statusCode: number;
  body: unknown;
  location: string | null;
}

/** A key reserved by one request: `createdAt` tells its record from a later claim of the same key. */
export type ClaimedKey = Pick<IdempotencyRecordEntity, 'owner' | 'idempotencyKey' | 'createdAt'>;

const claimId = ({ owner, createdAt, idempotencyKey }: ClaimedKey) =>
  `${owner} ${createdAt} ${idempotencyKey}`;

function conflict(leaseLeftMs: number): ApiException {
  const seconds = Math.ceil(Math.min(leaseLeftMs, IN_FLIGHT_LEASE_MS) / 1000);
  return new ApiException('idempotency_conflict', undefined, undefined, {
    'Retry-After': String(Math.max(1, seconds)),
  });
}

export type Claim = { kind: 'new'; claimed: ClaimedKey } | { kind: 'replay'; response: StoredResponse };

/** In the database so that every instance sees them; a unique index decides between concurrent claims. */
@Injectable()
export class IdempotencyService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Idempotency');
  private cleanup: NodeJS.Timeout | undefined;
  /** Claims not released while the database was away (and since when); a retry here takes them over. */
  private readonly unreleased = new Map<string, { claimed: ClaimedKey; since: number }>();
  private releaseTimer: NodeJS.Timeout | undefined;

  constructor(
    @InjectRepository(IdempotencyRecordEntity) private readonly records: Repository<IdempotencyRecordEntity>,
  ) {}

  onModuleInit(): void {
    this.cleanup = setInterval(() => void this.deleteExpired(), CLEANUP_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.cleanup);
    clearTimeout(this.releaseTimer);
  }

  private async deleteExpired(): Promise<void> {
    try {
      await this.records.delete({ expiresAt: LessThanOrEqual(Date.now()) });
    } catch (error) {
      this.logger.warn(`could not delete expired idempotency keys: ${(error as Error).message}`);
    }
  }

  /** Within the outage wait, a claim whose answer was lost is tried again and takes its own record over. */
  claim(owner: string, idempotencyKey: string, requestHash: string, now = Date.now()): Promise<Claim> {
    let createdAt: number | undefined;
    return Connections.of(this.records.manager.connection).retryUnlessCommitted(async () => {
      // Each attempt its own time: a failed attempt's background release never matches the one that won.
      createdAt = createdAt === undefined ? now : Math.max(Date.now(), createdAt + 1);
      const claimed = { owner, idempotencyKey, createdAt };
      return this.claimKey(claimed, requestHash, now).catch((error: unknown) => {
        // The INSERT may have committed although its answer was lost: that record must not block a retry.
        if (databaseOutageCause(error) !== undefined) this.releaseLater(claimed);
        throw error;
      });
    });
  }

  private async claimKey(claimed: ClaimedKey, requestHash: string, now: number): Promise<Claim> {
    const { owner, idempotencyKey } = claimed;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.records.insert({
          ...claimed,
          requestHash,
          state: 'in_flight',
          statusCode: null,
          responseBody: null,
          location: null,
          // From now, not from when the request began: it may have waited for the database.
          expiresAt: Date.now() + IN_FLIGHT_LEASE_MS,
        });
        return { kind: 'new', claimed };
      } catch (insertError) {
        // Not a duplicate key: the database is away (and has been waited for already).
        if (databaseOutageCause(insertError) !== undefined) throw insertError;
        const existing = await this.records.findOneBy({ owner, idempotencyKey });
        if (!existing) {
          if (attempt === 2) throw insertError;
          continue; // deleted in between: try again
        }
        const abandoned = claimId(existing);
        // Expired: a done key past its day, or a claim whose request stopped renewing it.
        const stale =
          existing.expiresAt <= now || (existing.state === 'in_flight' && this.unreleased.has(abandoned));
        if (stale) {
          // Only the record as it was read: not one whose work committed meanwhile, nor one renewed.
          const { id, createdAt, state, expiresAt } = existing;
          await this.records.delete({ id, createdAt, state, expiresAt });
          this.unreleased.delete(abandoned);
          continue;
        }
        if (existing.requestHash !== requestHash) throw new ApiException('idempotency_key_reused');
        if (existing.state === 'in_flight') throw conflict(existing.expiresAt - Date.now());
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
    throw conflict(IN_FLIGHT_LEASE_MS);
  }

  /** False if the claim is no longer this request's. */
  async renew(claimed: ClaimedKey, now = Date.now()): Promise<boolean> {
    const result = await this.records.update(
      { ...claimed, state: 'in_flight' },
      { expiresAt: now + IN_FLIGHT_LEASE_MS },
    );
    return result.affected === 1;
  }

  /** In the work's transaction: a claim taken over meanwhile fails it, so one key never does work twice. */
  async complete(
    claimed: ClaimedKey,
    response: StoredResponse,
    manager: EntityManager = this.records.manager,
  ): Promise<void> {
    const result = await manager.update(
      IdempotencyRecordEntity,
      { ...claimed, state: 'in_flight' },
      {
        state: 'done',
        statusCode: response.statusCode,
        responseBody: JSON.stringify(response.body),
        location: response.location,
        expiresAt: claimed.createdAt + IDEMPOTENCY_TTL_MS,
      },
    );
    if (result.affected !== 1) throw conflict(IN_FLIGHT_LEASE_MS);
  }

  /** Only a record still in flight is deleted: one whose work committed stays. */
  async release(claimed: ClaimedKey): Promise<void> {
    await this.records.delete({ ...claimed, state: 'in_flight' }).catch((error: unknown) => {
      this.releaseLater(claimed);
      throw error;
    });
  }

  private releaseLater(claimed: ClaimedKey): void {
    this.unreleased.set(claimId(claimed), { claimed, since: Date.now() });
    this.scheduleReleases();
  }

  private scheduleReleases(): void {
    if (this.releaseTimer !== undefined || this.unreleased.size === 0) return;
    this.releaseTimer = setTimeout(() => void this.retryReleases(), RELEASE_RETRY_MS).unref();
  }

  private async retryReleases(now = Date.now()): Promise<void> {
    for (const [id, { claimed, since }] of this.unreleased) {
      try {
        // Once its lease has run out, any request takes it over: it need not be deleted.
        if (now - since <= IN_FLIGHT_LEASE_MS) await this.records.delete({ ...claimed, state: 'in_flight' });
        this.unreleased.delete(id);
      } catch {
        break; // still away: all of them wait for the next round
      }
    }
    this.releaseTimer = undefined;
    this.scheduleReleases();
  }
}
