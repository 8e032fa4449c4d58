import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { boundedLru } from '../common/bounded-lru';
import { randomBytes } from 'node:crypto';
import { IsNull, Repository } from 'typeorm';
import type { AuthConfig } from '../config/app-config';
import { Page } from '../common/pagination/page';
import { EVERY_SCOPE, SCOPE_FORMAT } from '../common/scopes';
import { Connections } from '../database/connections';
import { Transactions } from '../database/transactions';
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

/** A refusal to say as it is: to the CLI's user, or as a 400, 404 or 409 of the API. */
export class ApiKeyError extends Error {
  constructor(
    message: string,
    readonly kind: 'invalid' | 'not_found' | 'revoked' = 'invalid',
    readonly field?: string,
  ) {
    super(message);
  }
}

const invalid = (field: string, message: string) => new ApiKeyError(message, 'invalid', field);

export interface KeyChange {
  name?: string;
  scopes?: readonly string[] | typeof EVERY_SCOPE;
  /** null: no expiry (or the longest one, where a maximum is set). */
  expiresAt?: number | null;
}

export type Refusal = 'unknown' | 'revoked' | 'expired';

export type Scopes = typeof EVERY_SCOPE | ReadonlySet<string>;

export const holds = (scopes: Scopes, scope: string): boolean => scopes === EVERY_SCOPE || scopes.has(scope);

export interface VerifiedKey {
  readonly id: number;
  readonly name: string;
  readonly scopes: Scopes;
  readonly until: number;
}

export const KEY_POLICY = Symbol('KEY_POLICY');

/** When a change happens and, made through the API, its request (for the audit log). */
export interface KeyWrite {
  now?: number;
  request?: object;
}

export const MAX_GRACE_MS = 7 * 24 * 3600_000;
export const DEFAULT_GRACE_MS = 24 * 3600_000;

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
  private readonly verified = boundedLru<string, VerifiedKey>(CACHE_LIMIT, { ttl: KNOWN_KEY_MS });
  private readonly refused = boundedLru<string, { verdict: Refusal; until: number }>(CACHE_LIMIT, {
    ttl: UNKNOWN_CACHE_MS,
  });
  private readonly lastUsedWritten = new Map<number, number>();
  private readonly connections: Connections;

  constructor(
    @InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>,
    private readonly transactions: Transactions,
    @Optional() @Inject(KEY_POLICY) private readonly policy?: Pick<AuthConfig, 'maxLifetimeDays'>,
  ) {
    this.connections = Connections.of(keys.manager.connection);
  }

  /** A write to the keys in a unit of work; made for an API `request`, audited with it. */
  private write<R>(
    request: object | undefined,
    work: (keys: Repository<ApiKeyEntity>) => Promise<R>,
    audited: (result: R) => { resourceId: number; outcome: number } | undefined,
  ): Promise<R> {
    return this.transactions.run(async (unit) => {
      const result = await work(unit.manager.getRepository(ApiKeyEntity));
      const change = audited(result);
      if (change) unit.audit('api-keys', change.resourceId, change.outcome);
      return result;
    }, request);
  }

  async create(
    name: string,
    options: Omit<KeyChange, 'name'> = {},
    { now = Date.now(), request }: KeyWrite = {},
  ): Promise<CreatedApiKey> {
    const key = generateApiKey();
    const record: Omit<ApiKeyEntity, 'id'> = {
      name: keyName(name),
      prefix: key.slice(0, PREFIX_LENGTH),
      keyHash: hashApiKey(key),
      scopes: scopesText(options.scopes ?? EVERY_SCOPE),
      expiresAt: this.expiry(options.expiresAt ?? null, now),
      previousKeyHash: null,
      previousExpiresAt: null,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    };
    const id = await this.write(
      request,
      async (keys) => Number((await keys.insert(record)).identifiers[0].id),
      (resourceId) => ({ resourceId, outcome: 201 }),
    );
    return { key, record: { id, ...record } };
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
    if (idPrefixOrKey.length < MIN_PREFIX_LENGTH)
      throw new ApiKeyError(
        `a prefix needs at least ${MIN_PREFIX_LENGTH} characters (the first ${MIN_PREFIX_LENGTH} to ${PREFIX_LENGTH} of the key, as list shows), or use the id`,
      );
    return this.keys
      .createQueryBuilder('key')
      .where('SUBSTR(key.prefix, 1, :length) = :prefix', {
        length: idPrefixOrKey.length,
        prefix: idPrefixOrKey,
      })
      .getMany();
  }

  private expiry(expiresAt: number | null, now: number): number | null {
    if (expiresAt !== null && expiresAt <= now)
      throw invalid('expiresAt', 'the expiry must be in the future');
    const days = this.policy?.maxLifetimeDays ?? null;
    if (days === null) return expiresAt;
    const longest = now + days * 86_400_000;
    if (expiresAt !== null && expiresAt > longest)
      throw invalid('expiresAt', `a key may live at most ${days} days (API_KEY_MAX_LIFETIME_DAYS)`);
    return expiresAt ?? longest;
  }

  private async findOne(idPrefixOrKey: string): Promise<ApiKeyEntity> {
    const matches = await this.find(idPrefixOrKey);
    // Never echo what could be a whole key.
    const given = idPrefixOrKey.length <= PREFIX_LENGTH ? `"${idPrefixOrKey}"` : 'given';
    if (matches.length === 0)
      throw new ApiKeyError(`no API key matches the id or prefix ${given}`, 'not_found');
    if (matches.length > 1)
      throw new ApiKeyError(`the prefix ${given} matches ${matches.length} keys: use the id instead`);
    return matches[0];
  }

  /** A new secret; the old one keeps working for `graceMs`, then only the new one does. */
  async rotate(
    idPrefixOrKey: string,
    graceMs = DEFAULT_GRACE_MS,
    { now = Date.now(), request }: KeyWrite = {},
  ): Promise<CreatedApiKey> {
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS)
      throw invalid('graceSeconds', 'the grace period must be from 0 to 7 days');
    const record = await this.live(idPrefixOrKey);
    const key = generateApiKey();
    const rotated = {
      prefix: key.slice(0, PREFIX_LENGTH),
      keyHash: hashApiKey(key),
      previousKeyHash: record.keyHash,
      previousExpiresAt: now + graceMs,
    };
    const { affected } = await this.write(
      request,
      (keys) => keys.update({ id: record.id, keyHash: record.keyHash }, rotated),
      ({ affected }) => (affected === 1 ? { resourceId: record.id, outcome: 200 } : undefined),
    );
    if (affected === 0) throw new ApiKeyError(`API key ${record.id} changed meanwhile: try again`);
    this.forgetSecrets(record);
    return { key, record: { ...record, ...rotated } };
  }

  /** Name, scopes or expiry; takes effect on every instance within VERIFY_CACHE_MS. */
  async update(
    idPrefixOrKey: string,
    change: KeyChange,
    { now = Date.now(), request }: KeyWrite = {},
  ): Promise<ApiKeyEntity> {
    const record = await this.live(idPrefixOrKey);
    const changed: Partial<ApiKeyEntity> = {};
    if (change.name !== undefined) changed.name = keyName(change.name);
    if (change.scopes !== undefined) changed.scopes = scopesText(change.scopes);
    if (change.expiresAt !== undefined) changed.expiresAt = this.expiry(change.expiresAt, now);
    if (Object.keys(changed).length > 0)
      await this.write(
        request,
        (keys) => keys.update({ id: record.id }, changed),
        () => ({ resourceId: record.id, outcome: 200 }),
      );
    this.forgetSecrets(record);
    return { ...record, ...changed };
  }

  get(id: number): Promise<ApiKeyEntity> {
    return this.findOne(String(id));
  }

  page(query: { limit: number; cursor?: string }): Promise<Page<ApiKeyEntity>> {
    return this.connections.page(ApiKeyEntity, [], query);
  }

  private async live(idPrefixOrKey: string): Promise<ApiKeyEntity> {
    const record = await this.findOne(idPrefixOrKey);
    if (record.revokedAt !== null) throw new ApiKeyError(`API key ${record.id} is revoked`, 'revoked');
    return record;
  }

  async revoke(idPrefixOrKey: string, { now = Date.now(), request }: KeyWrite = {}): Promise<ApiKeyEntity> {
    const key = await this.findOne(idPrefixOrKey);
    if (key.revokedAt === null) {
      key.revokedAt = now;
      await this.write(
        request,
        (keys) => keys.update({ id: key.id, revokedAt: IsNull() }, { revokedAt: now }),
        ({ affected }) => (affected === 1 ? { resourceId: key.id, outcome: 204 } : undefined),
      );
    }
    this.forgetSecrets(key);
    return key;
  }

  async verifyDigest(digest: string, now = Date.now()): Promise<VerifiedKey | Refusal> {
    const cached = this.verified.get(digest);
    if (cached && cached.until > now) {
      this.touch(cached.id, now);
      return cached;
    }
    const refused = this.refused.get(digest);
    if (refused && refused.until > now) return refused.verdict;
    const key = await this.connections.repeatable(() =>
      this.keys.findOne({
        select: ['id', 'name', 'scopes', 'keyHash', 'expiresAt', 'previousExpiresAt', 'revokedAt'],
        where: [{ keyHash: digest }, { previousKeyHash: digest }],
      }),
    );
    const expiresAt = key?.keyHash === digest ? key.expiresAt : (key?.previousExpiresAt ?? null);
    const verdict: Refusal | 'valid' = !key
      ? 'unknown'
      : key.revokedAt !== null
        ? 'revoked'
        : expiresAt !== null && expiresAt <= now
          ? 'expired'
          : 'valid';
    if (verdict !== 'valid') {
      this.forget(digest);
      this.refused.set(digest, { verdict, until: now + UNKNOWN_CACHE_MS });
      return verdict;
    }
    const verified: VerifiedKey = {
      id: key!.id,
      name: key!.name,
      scopes: key!.scopes === EVERY_SCOPE ? EVERY_SCOPE : new Set(key!.scopes.split(' ')),
      until: Math.min(now + VERIFY_CACHE_MS, expiresAt ?? Infinity),
    };
    this.verified.set(digest, verified);
    this.touch(verified.id, now);
    return verified;
  }

  /** Found valid lately by this instance: looked up even when its address is over the abuse budget. */
  isKnown(digest: string): boolean {
    return this.verified.has(digest);
  }

  /** Both secrets of a key that changed: looked up again at their next use. */
  private forgetSecrets(key: Pick<ApiKeyEntity, 'keyHash' | 'previousKeyHash'>): void {
    this.forget(key.keyHash);
    if (key.previousKeyHash) this.forget(key.previousKeyHash);
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

export function scopesText(scopes: readonly string[] | typeof EVERY_SCOPE): string {
  if (scopes === EVERY_SCOPE) return EVERY_SCOPE;
  const wrong = scopes.find((scope) => !SCOPE_FORMAT.test(scope));
  if (wrong !== undefined)
    throw invalid(
      'scopes',
      `"${wrong.slice(0, 70)}" is not a scope: use <collection>:read, <collection>:write or one such as keys:manage`,
    );
  return [...new Set(scopes)].sort().join(' ');
}

function keyName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || [...trimmed].length > 100 || /[\u0000-\u001f\u007f]/.test(trimmed))
    throw invalid('name', 'the name must be 1 to 100 characters without control characters');
  return trimmed;
}
