import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { generateApiKey } from '../common/auth/api-key.format';
import { ApiKeyEntity } from './api-key.entity';

/** How long a verified key is trusted without asking the database again: revocation takes effect within it. */
export const VERIFY_CACHE_MS = 1000;
/** last_used_at is written at most this often per key and instance. */
export const LAST_USED_WRITE_INTERVAL_MS = 60_000;
const CACHE_LIMIT = 10_000;
const PREFIX_LENGTH = 12;

export class ApiKeyError extends Error {}

export type StoredKeyCheck = 'valid' | 'revoked' | 'unknown';

export interface CreatedApiKey {
  /** The key itself: shown once, never stored. */
  key: string;
  record: ApiKeyEntity;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * Stored API keys: created (the key is returned once and only its digest kept), listed,
 * revoked, and verified per request by a unique-index lookup on the digest.
 */
@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  /** digest → key id and when the verdict expires; only valid keys are cached. */
  private readonly verified = new Map<string, { id: number; until: number }>();
  /** key id → when this instance last wrote last_used_at. */
  private readonly lastUsedWritten = new Map<number, number>();

  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  async create(name: string, now = Date.now()): Promise<CreatedApiKey> {
    const trimmed = name.trim();
    if (trimmed === '' || [...trimmed].length > 100 || /[\u0000-\u001f\u007f]/.test(trimmed)) {
      throw new ApiKeyError('the name must be 1 to 100 characters without control characters');
    }
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

  /** Whether any key that is not revoked exists. */
  async hasActiveKeys(): Promise<boolean> {
    return (await this.keys.countBy({ revokedAt: IsNull() })) > 0;
  }

  /** Keys matching an id (digits), a prefix of 8 to 12 characters, or a whole key (looked up by digest). */
  private async find(idPrefixOrKey: string): Promise<ApiKeyEntity[]> {
    if (/^\d{1,15}$/.test(idPrefixOrKey)) return this.keys.findBy({ id: Number(idPrefixOrKey) });
    if (idPrefixOrKey.length > PREFIX_LENGTH) return this.keys.findBy({ keyHash: hashApiKey(idPrefixOrKey) });
    if (idPrefixOrKey.length < 8) return [];
    return this.keys
      .createQueryBuilder('key')
      .where('SUBSTR(key.prefix, 1, :length) = :prefix', {
        length: idPrefixOrKey.length,
        prefix: idPrefixOrKey,
      })
      .getMany();
  }

  /** Revokes the key with this id, prefix (at least 8 characters) or value; returns it. */
  async revoke(idPrefixOrKey: string, now = Date.now()): Promise<ApiKeyEntity> {
    const matches = await this.find(idPrefixOrKey);
    // Echo what was given only if it can be no more than a prefix: never repeat a whole key.
    const given = idPrefixOrKey.length <= PREFIX_LENGTH ? `"${idPrefixOrKey}"` : 'given';
    if (matches.length === 0) throw new ApiKeyError(`no API key matches the id or prefix ${given}`);
    if (matches.length > 1) {
      throw new ApiKeyError(`the prefix ${given} matches ${matches.length} keys: use the id instead`);
    }
    const [key] = matches;
    if (key.revokedAt === null) {
      key.revokedAt = now;
      await this.keys.update({ id: key.id, revokedAt: IsNull() }, { revokedAt: now });
    }
    this.forget(key.keyHash);
    return key;
  }

  /** Whether `presented` is a stored key that is not revoked. */
  async verify(presented: string, now = Date.now()): Promise<boolean> {
    return (await this.check(presented, now)) === 'valid';
  }

  /** What `presented` is: a stored key that is valid, one that was revoked, or unknown. */
  async check(presented: string, now = Date.now()): Promise<StoredKeyCheck> {
    const digest = hashApiKey(presented);
    const cached = this.verified.get(digest);
    if (cached && cached.until > now) {
      this.touch(cached.id, now);
      return 'valid';
    }
    const key = await this.keys.findOne({
      select: { id: true, revokedAt: true },
      where: { keyHash: digest },
    });
    if (!key || key.revokedAt !== null) {
      this.forget(digest);
      return key ? 'revoked' : 'unknown';
    }
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    this.verified.set(digest, { id: key.id, until: now + VERIFY_CACHE_MS });
    this.touch(key.id, now);
    return 'valid';
  }

  private forget(digest: string): void {
    this.verified.delete(digest);
  }

  /** Records use without a write per request: at most one UPDATE per key per interval. */
  private touch(id: number, now: number): void {
    const last = this.lastUsedWritten.get(id);
    if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWritten.set(id, now);
    this.keys.update({ id }, { lastUsedAt: now }).catch((error: unknown) => {
      this.logger.warn(`could not record the use of API key ${id}: ${(error as Error).message}`);
    });
  }
}
