import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { boundedLru } from '../common/bounded-lru';
import { randomBytes } from 'node:crypto';
import { IsNull, Repository } from 'typeorm';
import { repeatable } from '../database/outage-wait';
import { ApiKeyEntity } from './api-key.entity';
import { digest } from './api-key.store';

/** Trusted without asking the database this long: revocation takes effect within it. */
export const VERIFY_CACHE_MS = 1000;
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;
export const UNKNOWN_CACHE_MS = 10_000;
export const KNOWN_KEY_MS = 15 * 60_000;
const CACHE_LIMIT = 10_000;
const PREFIX_LENGTH = 12;
const MIN_PREFIX_LENGTH = 8;

export class ApiKeyError extends Error {}

export type KeyVerdict = 'valid' | 'unknown' | 'revoked';

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyEntity;
}

/** The `pet_` prefix lets secret scanners match it. */
export function generateApiKey(): string {
  return `pet_${randomBytes(32).toString('base64url')}`;
}

export function hashApiKey(key: string): string {
  return digest(key).toString('hex');
}

@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  /** Trusted until `until`, but kept for KNOWN_KEY_MS for `isKnown`. */
  private readonly verified = boundedLru<string, { id: number; until: number }>(CACHE_LIMIT, {
    ttl: KNOWN_KEY_MS,
  });
  private readonly refused = boundedLru<string, { verdict: Exclude<KeyVerdict, 'valid'>; until: number }>(
    CACHE_LIMIT,
    { ttl: UNKNOWN_CACHE_MS },
  );
  private readonly lastUsedWritten = new Map<number, number>();

  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  async create(name: string, now = Date.now()): Promise<CreatedApiKey> {
    const trimmed = name.trim();
    if (trimmed === '' || [...trimmed].length > 100 || /[\u0000-\u001f\u007f]/.test(trimmed))
      throw new ApiKeyError('the name must be 1 to 100 characters without control characters');
    const key = generateApiKey();
    const record: Omit<ApiKeyEntity, 'id'> = {
      name: trimmed,
      prefix: key.slice(0, PREFIX_LENGTH),
      keyHash: hashApiKey(key),
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    };
    const result = await this.keys.insert(record);
    return { key, record: { id: Number(result.identifiers[0].id), ...record } };
  }

  list(): Promise<ApiKeyEntity[]> {
    return this.keys.find({ order: { id: 'ASC' } });
  }

  async hasActiveKeys(): Promise<boolean> {
    return (await this.keys.countBy({ revokedAt: IsNull() })) > 0;
  }

  private async find(idPrefixOrKey: string): Promise<ApiKeyEntity[]> {
    if (/^\d{1,15}$/.test(idPrefixOrKey)) return this.keys.findBy({ id: Number(idPrefixOrKey) });
    if (idPrefixOrKey.length > PREFIX_LENGTH) return this.keys.findBy({ keyHash: hashApiKey(idPrefixOrKey) });
    if (idPrefixOrKey.length < MIN_PREFIX_LENGTH) {
      throw new ApiKeyError(
        `a prefix needs at least ${MIN_PREFIX_LENGTH} characters (the first ${MIN_PREFIX_LENGTH} to ${PREFIX_LENGTH} of the key, as list shows), or use the id`,
      );
    }
    return this.keys
      .createQueryBuilder('key')
      .where('SUBSTR(key.prefix, 1, :length) = :prefix', {
        length: idPrefixOrKey.length,
        prefix: idPrefixOrKey,
      })
      .getMany();
  }

  async revoke(idPrefixOrKey: string, now = Date.now()): Promise<ApiKeyEntity> {
    const matches = await this.find(idPrefixOrKey);
    // Never echo what could be a whole key.
    const given = idPrefixOrKey.length <= PREFIX_LENGTH ? `"${idPrefixOrKey}"` : 'given';
    if (matches.length === 0) throw new ApiKeyError(`no API key matches the id or prefix ${given}`);
    if (matches.length > 1)
      throw new ApiKeyError(`the prefix ${given} matches ${matches.length} keys: use the id instead`);
    const [key] = matches;
    if (key.revokedAt === null) {
      key.revokedAt = now;
      await this.keys.update({ id: key.id, revokedAt: IsNull() }, { revokedAt: now });
    }
    this.forget(key.keyHash);
    return key;
  }

  async verify(presented: string, now = Date.now()): Promise<boolean> {
    return (await this.verifyDigest(hashApiKey(presented), now)) === 'valid';
  }

  async verifyDigest(digest: string, now = Date.now()): Promise<KeyVerdict> {
    const cached = this.verified.get(digest);
    if (cached && cached.until > now) {
      this.touch(cached.id, now);
      return 'valid';
    }
    const refused = this.refused.get(digest);
    if (refused && refused.until > now) return refused.verdict;
    const key = await repeatable(this.keys.manager.connection, () =>
      this.keys.findOne({
        select: { id: true, revokedAt: true },
        where: { keyHash: digest },
      }),
    );
    if (!key || key.revokedAt !== null) {
      this.forget(digest);
      const verdict = key ? 'revoked' : 'unknown';
      this.refused.set(digest, { verdict, until: now + UNKNOWN_CACHE_MS });
      return verdict;
    }
    this.verified.set(digest, { id: key.id, until: now + VERIFY_CACHE_MS });
    this.touch(key.id, now);
    return 'valid';
  }

  /** Found valid lately by this instance: looked up even when its address is over the abuse budget. */
  isKnown(digest: string): boolean {
    return this.verified.has(digest);
  }

  private forget(digest: string): void {
    this.verified.delete(digest);
    this.refused.delete(digest);
  }

  private touch(id: number, now: number): void {
    const last = this.lastUsedWritten.get(id);
    if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWritten.set(id, now);
    this.keys.update({ id }, { lastUsedAt: now }).catch((error: unknown) => {
      this.logger.warn(`could not record the use of API key ${id}: ${(error as Error).message}`);
    });
  }
}
