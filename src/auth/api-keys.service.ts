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
import type { UnitOfWork } from '../database/unit-of-work';
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
    readonly kind: 'invalid' | 'not_found' | 'revoked' | 'last_manager' | 'changed' = 'invalid',
    readonly field?: string,
  ) {
    super(message);
  }
}

const MANAGE = 'keys:manage';
const manages = (scopes: string) => scopes === EVERY_SCOPE || scopes.split(' ').includes(MANAGE);
/** Holds `keys:manage` and has not expired by `now` (both callers read only unrevoked keys). */
const canManage = (key: { scopes: string; expiresAt: number | null }, now: number) =>
  manages(key.scopes) && (key.expiresAt === null || Number(key.expiresAt) > now);

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
  /** Made through the API: asked of the key as it is, before anything changes (a 403 of the caller's scopes). */
  check?: (key: ApiKeyEntity) => void;
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
    @Optional()
    @Inject(KEY_POLICY)
    private readonly policy?: Partial<Pick<AuthConfig, 'maxLifetimeDays' | 'apiKeys'>>,
  ) {
    this.connections = Connections.of(keys.manager.connection);
  }

  /**
   * `set` on the key as it was read, if it still is (racing changes: one wins, the others 409).
   * Through the API, the last active key that can manage keys keeps that power (409).
   */
  private change(
    key: ApiKeyEntity,
    set: Partial<ApiKeyEntity>,
    outcome: number,
    write: KeyWrite,
  ): Promise<void> {
    return this.transactions.run(async (work) => {
      // PostgreSQL: changes of keys one after another, so that two cannot each leave the other the last manager.
      await work.lock('petstore_api_keys');
      if (write.check && this.removesManager(key, set)) await this.keepManager(key.id, work, write.now);
      const { id, keyHash, name, scopes, expiresAt } = key;
      const unchanged = { id, keyHash, name, scopes, expiresAt: expiresAt ?? IsNull(), revokedAt: IsNull() };
      const { affected } = await work.manager.update(ApiKeyEntity, unchanged, set);
      if (affected !== 1) throw new ApiKeyError(`API key ${key.id} changed meanwhile`, 'changed');
      work.audit('api-keys', key.id, outcome);
    }, write.request);
  }

  private removesManager(key: ApiKeyEntity, set: Partial<ApiKeyEntity>): boolean {
    if (!manages(key.scopes) || this.policy?.apiKeys?.length) return false;
    const { revokedAt, scopes, expiresAt } = set;
    const expires = expiresAt != null && (key.expiresAt === null || expiresAt < key.expiresAt);
    return revokedAt != null || (scopes !== undefined && !manages(scopes)) || expires;
  }

  /** 409 unless another active key can manage keys (an `API_KEYS` entry counts as one). */
  private async keepManager(id: number, work: UnitOfWork, now = Date.now()): Promise<void> {
    const active = await work.read<{ id: number; scopes: string; expiresAt: number | null }>(
      'SELECT "id", "scopes", "expires_at" AS "expiresAt" FROM "api_keys" WHERE "revoked_at" IS NULL',
      [],
    );
    if (!active.some((key) => Number(key.id) !== id && canManage(key, now)))
      throw new ApiKeyError(`API key ${id} is the last active key that can manage keys`, 'last_manager');
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
    const id = await this.transactions.run(async (work) => {
      const inserted = Number((await work.manager.insert(ApiKeyEntity, record)).identifiers[0].id);
      work.audit('api-keys', inserted, 201);
      return inserted;
    }, request);
    return { key, record: { id, ...record } };
  }

  list(): Promise<ApiKeyEntity[]> {
    return this.keys.find({ order: { id: 'ASC' } });
  }

  /** Whether a stored key could manage keys now: else the service starts with a bootstrap key (key-setup.ts). */
  async hasUsableManager(now = Date.now()): Promise<boolean> {
    const active = await this.keys.find({ select: ['scopes', 'expiresAt'], where: { revokedAt: IsNull() } });
    return active.some((key) => canManage(key, now));
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
    write: KeyWrite = {},
  ): Promise<CreatedApiKey> {
    const now = (write.now ??= Date.now());
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS)
      throw invalid('graceSeconds', 'the grace period must be from 0 to 7 days');
    const record = await this.live(idPrefixOrKey);
    write.check?.(record);
    const key = generateApiKey();
    const rotated = {
      prefix: key.slice(0, PREFIX_LENGTH),
      keyHash: hashApiKey(key),
      previousKeyHash: record.keyHash,
      previousExpiresAt: now + graceMs,
    };
    await this.change(record, rotated, 200, write);
    this.forgetSecrets(record);
    return { key, record: { ...record, ...rotated } };
  }

  /** Name, scopes or expiry; takes effect on every instance within VERIFY_CACHE_MS. One that changes nothing writes nothing. */
  async update(idPrefixOrKey: string, change: KeyChange, write: KeyWrite = {}): Promise<ApiKeyEntity> {
    const now = (write.now ??= Date.now());
    const record = await this.live(idPrefixOrKey);
    write.check?.(record);
    const wanted: Partial<ApiKeyEntity> = {
      ...(change.name === undefined ? {} : { name: keyName(change.name) }),
      ...(change.scopes === undefined ? {} : { scopes: scopesText(change.scopes) }),
      ...(change.expiresAt === undefined ? {} : { expiresAt: this.expiry(change.expiresAt, now) }),
    };
    const changed = Object.fromEntries(
      Object.entries(wanted).filter(([name, value]) => record[name as keyof ApiKeyEntity] !== value),
    ) as Partial<ApiKeyEntity>;
    if (Object.keys(changed).length > 0) await this.change(record, changed, 200, write);
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

  /** Revoking a revoked key changes nothing. */
  async revoke(idPrefixOrKey: string, write: KeyWrite = {}): Promise<ApiKeyEntity> {
    const now = (write.now ??= Date.now());
    const key = await this.findOne(idPrefixOrKey);
    write.check?.(key);
    if (key.revokedAt === null) {
      await this.change(key, { revokedAt: now }, 204, write).catch(async (error: unknown) => {
        // Revoked meanwhile by another request: as asked.
        if (!(error instanceof ApiKeyError && error.kind === 'changed')) throw error;
        if ((await this.findOne(String(key.id))).revokedAt === null) throw error;
      });
      key.revokedAt = now;
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
