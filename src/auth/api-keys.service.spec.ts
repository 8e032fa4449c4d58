import { createHash } from 'node:crypto';
import { DataSource, Repository } from 'typeorm';
import { isWellFormedApiKey } from '../common/validation/api-key-format';
import { openMigratedDatabase } from '../../test/support/database';
import { Transactions } from '../database/transactions';
import { ApiKeyEntity } from './api-key.entity';
import {
  ApiKeyError,
  ApiKeysService,
  generateApiKey,
  hashApiKey,
  LAST_USED_WRITE_INTERVAL_MS,
  UNKNOWN_CACHE_MS,
  VERIFY_CACHE_MS,
} from './api-keys.service';

const KEY_FORMAT = /^pet_[A-Za-z0-9_-]{43}$/;
const T0 = Date.UTC(2030, 0, 1);

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Whether the service lets `key` through, asked as the guard asks it: by digest. */
async function verifies(service: ApiKeysService, key: string, now?: number): Promise<boolean> {
  return typeof (await service.verifyDigest(sha256Hex(key), now)) === 'object';
}

/** The ApiKeyError a promise rejects with, or a failure if it resolves. */
async function apiKeyError(promise: Promise<unknown>): Promise<ApiKeyError> {
  await expect(promise).rejects.toBeInstanceOf(ApiKeyError);
  return (await promise.catch((error: unknown) => error)) as ApiKeyError;
}

/** Polls until `check` holds: the last_used_at write is fire-and-forget. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The key without its prefix, decoded: the random bytes it carries. */
function randomPart(key: string): Buffer {
  expect(key.startsWith('pet_')).toBe(true);
  return Buffer.from(key.slice('pet_'.length), 'base64url');
}

describe('generateApiKey', () => {
  it('makes pet_ and 43 base64url characters: 32 random bytes, no padding', () => {
    const key = generateApiKey();

    expect(key).toMatch(KEY_FORMAT);
    expect(key).toHaveLength(47);
    expect(randomPart(key)).toHaveLength(32);
    expect(randomPart(key).toString('base64url')).toBe(key.slice('pet_'.length));
  });

  it('makes a different, well-formed key on each of 1000 calls', () => {
    const keys = Array.from({ length: 1000 }, () => generateApiKey());

    expect(new Set(keys).size).toBe(1000);
    expect(keys.filter((key) => !KEY_FORMAT.test(key))).toEqual([]);
    expect(keys.filter((key) => !isWellFormedApiKey(key))).toEqual([]);
  });
});

describe('ApiKeysService (in-memory SQLite)', () => {
  let dataSource: DataSource;
  let repository: Repository<ApiKeyEntity>;
  let service: ApiKeysService;

  beforeEach(async () => {
    dataSource = await openMigratedDatabase();
    repository = dataSource.getRepository(ApiKeyEntity);
    service = new ApiKeysService(repository, new Transactions(dataSource));
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const rows = () => dataSource.query<Record<string, unknown>[]>('SELECT * FROM api_keys ORDER BY id');
  const row = (id: number) => repository.findOneByOrFail({ id });

  describe('create', () => {
    it('returns a pet_ key once and stores only its SHA-256 hex digest and its first 12 characters', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });

      expect(key).toMatch(KEY_FORMAT);
      expect(record).toEqual({
        id: 1,
        name: 'client-a',
        prefix: key.slice(0, 12),
        keyHash: sha256Hex(key),
        scopes: '*',
        expiresAt: null,
        previousKeyHash: null,
        previousExpiresAt: null,
        createdAt: T0,
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(hashApiKey(key)).toBe(sha256Hex(key));

      const stored = await rows();
      expect(stored).toEqual([
        {
          id: 1,
          name: 'client-a',
          prefix: key.slice(0, 12),
          key_hash: sha256Hex(key),
          scopes: '*',
          expires_at: null,
          previous_key_hash: null,
          previous_expires_at: null,
          created_at: T0,
          last_used_at: null,
          revoked_at: null,
        },
      ]);
      const values = Object.values(stored[0]).map(String);
      expect(values.filter((value) => value.includes(key))).toEqual([]);
      expect(values.filter((value) => value.includes(key.slice(12)))).toEqual([]);
    });

    it('makes a different key, id and digest for each client', async () => {
      const a = await service.create('client-a');
      const b = await service.create('client-b');

      expect(a.key).not.toBe(b.key);
      expect(b.record.id).toBe(a.record.id + 1);
      expect(b.record.keyHash).not.toBe(a.record.keyHash);
    });

    it('stamps the creation time with the clock by default', async () => {
      const before = Date.now();
      const { record } = await service.create('client-a');

      expect(record.createdAt).toBeGreaterThanOrEqual(before);
      expect(record.createdAt).toBeLessThanOrEqual(Date.now());
      expect((await row(record.id)).createdAt).toBe(record.createdAt);
    });

    it('trims the name', async () => {
      const { record } = await service.create('  \tclient a \n ');

      expect(record.name).toBe('client a');
      expect((await row(record.id)).name).toBe('client a');
    });

    it.each([
      ['100 characters', 'n'.repeat(100)],
      ['100 code points outside the BMP', '🐶'.repeat(100)],
      ['non-ASCII letters', 'Équipe Zürich'],
    ])('accepts a name of %s', async (_label, name) => {
      const { record } = await service.create(name);

      expect((await row(record.id)).name).toBe(name);
    });

    it.each([
      ['empty', ''],
      ['blank', ' \t '],
      ['101 characters', 'n'.repeat(101)],
      ['101 characters after trimming', ` ${'n'.repeat(101)} `],
      ['a newline inside', 'client\na'],
      ['a NUL inside', 'client\u0000a'],
      ['an escape inside', 'client\u001b[31ma'],
      ['a DEL inside', 'client\u007fa'],
    ])('rejects a name that is %s and stores nothing', async (_label, name) => {
      const error = await apiKeyError(service.create(name));

      expect(error.message).toBe('the name must be 1 to 100 characters without control characters');
      expect(await rows()).toEqual([]);
    });
  });

  describe('list', () => {
    it('is empty without keys', async () => {
      await expect(service.list()).resolves.toEqual([]);
    });

    it('lists every key in id order, revoked ones included, without the key', async () => {
      const a = await service.create('client-a', {}, { now: T0 });
      const b = await service.create('client-b', {}, { now: T0 + 1 });
      const c = await service.create('client-c', {}, { now: T0 + 2 });
      await service.revoke(String(b.record.id), { now: T0 + 3 });

      const listed = await service.list();

      expect(listed.map((key) => key.id)).toEqual([1, 2, 3]);
      expect(listed).toEqual([a.record, { ...b.record, revokedAt: T0 + 3 }, c.record]);
      expect(JSON.stringify(listed)).not.toContain(a.key.slice(12));
    });
  });

  describe('verify', () => {
    it('accepts a created key and refuses unknown ones', async () => {
      const { key } = await service.create('client-a');

      await expect(verifies(service, key)).resolves.toBe(true);
      await expect(verifies(service, `${key}x`)).resolves.toBe(false);
      await expect(verifies(service, key.slice(0, -1))).resolves.toBe(false);
      await expect(verifies(service, 'pet_unknown-0123456789abcdef')).resolves.toBe(false);
      await expect(verifies(service, '')).resolves.toBe(false);
    });

    it('refuses a key someone stored in clear instead of its digest', async () => {
      const key = 'pet_stored-in-clear-0123456789';
      await repository.insert({
        name: 'clear',
        prefix: key.slice(0, 12),
        keyHash: key,
        scopes: '*',
        createdAt: T0,
      });

      await expect(verifies(service, key)).resolves.toBe(false);
    });

    it('remembers a refusal briefly: a repeated unknown key is one query, not one per request', async () => {
      const key = 'pet_added-by-another-instance-0123';
      const lookups = jest.spyOn(repository, 'findOne');
      await expect(service.verifyDigest(sha256Hex(key), T0)).resolves.toBe('unknown');

      await repository.insert({
        name: 'late',
        prefix: key.slice(0, 12),
        keyHash: sha256Hex(key),
        scopes: '*',
        createdAt: T0,
      });

      await expect(verifies(service, key, T0 + UNKNOWN_CACHE_MS - 1)).resolves.toBe(false);
      expect(lookups).toHaveBeenCalledTimes(1);
      await expect(verifies(service, key, T0 + UNKNOWN_CACHE_MS)).resolves.toBe(true);
      expect(lookups).toHaveBeenCalledTimes(2);
    });

    it('tells a revoked key from an unknown one, and remembers that briefly too', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      await service.revoke(String(record.id), { now: T0 + 1 });

      await expect(service.verifyDigest(sha256Hex(key), T0 + 2)).resolves.toBe('revoked');
      await expect(
        service.verifyDigest(sha256Hex('pet_never-stored-0123456789abcdef'), T0 + 2),
      ).resolves.toBe('unknown');
      expect(service.isKnown(sha256Hex(key))).toBe(false);
    });

    it('looks the digest up through the unique index, not by scanning the table', async () => {
      const plan = await dataSource.query<{ detail: string }[]>(
        'EXPLAIN QUERY PLAN SELECT id, revoked_at FROM api_keys WHERE key_hash = ?',
        [sha256Hex('anything')],
      );

      expect(plan.map((step) => step.detail).join('\n')).toContain('USING INDEX uq_api_keys_key_hash');
    });
  });

  describe('revoke', () => {
    it('revokes by id: the same instance refuses the key at once, even if it just accepted it', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      await expect(verifies(service, key, T0 + 1)).resolves.toBe(true);

      await expect(service.revoke(String(record.id), { now: T0 + 2 })).resolves.toMatchObject({
        id: record.id,
        name: 'client-a',
        revokedAt: T0 + 2,
      });

      await expect(verifies(service, key, T0 + 3)).resolves.toBe(false);
      expect((await row(record.id)).revokedAt).toBe(T0 + 2);
    });

    it('revokes by the listed prefix', async () => {
      const other = await service.create('client-a', {}, { now: T0 });
      const { key, record } = await service.create('client-b', {}, { now: T0 });
      await expect(verifies(service, key, T0 + 1)).resolves.toBe(true);

      await expect(service.revoke(record.prefix, { now: T0 + 2 })).resolves.toMatchObject({
        id: record.id,
        revokedAt: T0 + 2,
      });

      await expect(verifies(service, key, T0 + 3)).resolves.toBe(false);
      await expect(verifies(service, other.key, T0 + 3)).resolves.toBe(true);
      expect((await row(other.record.id)).revokedAt).toBeNull();
    });

    it('takes effect in another instance sharing the database once VERIFY_CACHE_MS has passed', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      const otherInstance = new ApiKeysService(
        dataSource.getRepository(ApiKeyEntity),
        new Transactions(dataSource),
      );
      await expect(verifies(otherInstance, key, T0)).resolves.toBe(true);

      await service.revoke(String(record.id), { now: T0 + 1 });

      expect(VERIFY_CACHE_MS).toBeLessThanOrEqual(1000);
      await expect(verifies(service, key, T0 + 1)).resolves.toBe(false);
      // Bounded staleness: the other instance may trust its cached verdict until it expires.
      await expect(verifies(otherInstance, key, T0 + VERIFY_CACHE_MS - 1)).resolves.toBe(true);
      await expect(verifies(otherInstance, key, T0 + VERIFY_CACHE_MS)).resolves.toBe(false);
      await expect(verifies(otherInstance, key, T0 + VERIFY_CACHE_MS + 1)).resolves.toBe(false);
    });

    it('takes effect at once in another instance that had not cached the key', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      const otherInstance = new ApiKeysService(
        dataSource.getRepository(ApiKeyEntity),
        new Transactions(dataSource),
      );

      await service.revoke(String(record.id), { now: T0 + 1 });

      await expect(verifies(otherInstance, key, T0 + 2)).resolves.toBe(false);
    });

    it.each([
      ['an unknown id', '42'],
      ['id 0', '0'],
      ['an unknown prefix', 'pet_zzzzzzzz'],
    ])('refuses %s with an ApiKeyError and revokes nothing', async (_label, idOrPrefix) => {
      const { record } = await service.create('client-a', {}, { now: T0 });

      const error = await apiKeyError(service.revoke(idOrPrefix, { now: T0 + 1 }));

      expect(error.message).toBe(`no API key matches the id or prefix "${idOrPrefix}"`);
      expect((await row(record.id)).revokedAt).toBeNull();
    });

    it.each([
      ['a prefix shorter than 8 characters', 'pet_'],
      ['an empty string', ''],
      ['a negative id', '-1'],
    ])('refuses %s as too short to be a prefix, and revokes nothing', async (_label, idOrPrefix) => {
      const { record } = await service.create('client-a', {}, { now: T0 });

      const error = await apiKeyError(service.revoke(idOrPrefix, { now: T0 + 1 }));

      expect(error.message).toBe(
        'a prefix needs at least 8 characters (the first 8 to 12 of the key, as list shows), or use the id',
      );
      expect((await row(record.id)).revokedAt).toBeNull();
    });

    it.each([8, 10, 11, 12])('revokes by a prefix of %i characters', async (length) => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });

      await expect(service.revoke(key.slice(0, length), { now: T0 + 1 })).resolves.toMatchObject({
        id: record.id,
      });
      expect((await row(record.id)).revokedAt).toBe(T0 + 1);
    });

    it('revokes by the whole key (looked up by digest) and never repeats a key in an error', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      const other = `pet_${'x'.repeat(43)}`;

      const error = await apiKeyError(service.revoke(other, { now: T0 + 1 }));
      expect(error.message).toBe('no API key matches the id or prefix given');
      expect(error.message).not.toContain(other);

      await expect(service.revoke(key, { now: T0 + 2 })).resolves.toMatchObject({
        id: record.id,
        revokedAt: T0 + 2,
      });
    });

    it('refuses a prefix that matches several keys and revokes none of them', async () => {
      const prefix = 'pet_SamePref';
      await repository.insert([
        { name: 'one', prefix, keyHash: sha256Hex('one'), scopes: '*', createdAt: T0 },
        { name: 'two', prefix, keyHash: sha256Hex('two'), scopes: '*', createdAt: T0 },
      ]);

      const error = await apiKeyError(service.revoke(prefix, { now: T0 + 1 }));

      expect(error.message).toBe(`the prefix "${prefix}" matches 2 keys: use the id instead`);
      expect((await rows()).map((stored) => stored.revoked_at)).toEqual([null, null]);
      await expect(service.revoke('2', { now: T0 + 2 })).resolves.toMatchObject({ id: 2, revokedAt: T0 + 2 });
    });

    it('keeps the first revocation time when a key is revoked twice', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });

      await service.revoke(String(record.id), { now: T0 + 10 });
      await expect(service.revoke(record.prefix, { now: T0 + 20 })).resolves.toMatchObject({
        revokedAt: T0 + 10,
      });
      await expect(service.revoke(String(record.id), { now: T0 + 30 })).resolves.toMatchObject({
        revokedAt: T0 + 10,
      });

      expect((await row(record.id)).revokedAt).toBe(T0 + 10);
      await expect(verifies(service, key, T0 + 40)).resolves.toBe(false);
    });
  });

  describe('hasUsableManager', () => {
    it('is true only while an active, unexpired key holds keys:manage', async () => {
      await expect(service.hasUsableManager(T0)).resolves.toBe(false);

      const reader = await service.create('reader', { scopes: ['pets:read'] }, { now: T0 });
      await expect(service.hasUsableManager(T0)).resolves.toBe(false);
      const a = await service.create('admin-a', { scopes: ['keys:manage'], expiresAt: T0 + 10 }, { now: T0 });
      const b = await service.create('admin-b', {}, { now: T0 });
      await expect(service.hasUsableManager(T0)).resolves.toBe(true);

      await service.revoke(String(b.record.id), { now: T0 + 1 });
      await expect(service.hasUsableManager(T0 + 1)).resolves.toBe(true);
      await expect(service.hasUsableManager(T0 + 10)).resolves.toBe(false);
      await service.revoke(String(a.record.id), { now: T0 + 2 });
      await expect(service.hasUsableManager(T0 + 2)).resolves.toBe(false);
      expect(reader.record.revokedAt).toBeNull();
    });
  });

  describe('last_used_at', () => {
    it('is written on the first use, not again within LAST_USED_WRITE_INTERVAL_MS, and again after it', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      const update = jest.spyOn(repository, 'update');
      const lastUsedAt = async () => (await row(record.id)).lastUsedAt;
      expect(await lastUsedAt()).toBeNull();

      await expect(verifies(service, key, T0 + 100)).resolves.toBe(true);
      await eventually(async () => (await lastUsedAt()) === T0 + 100);
      expect(update).toHaveBeenCalledTimes(1);

      // From the cache, then from the database once the cache has expired: neither writes.
      await expect(verifies(service, key, T0 + 200)).resolves.toBe(true);
      await expect(verifies(service, key, T0 + 100 + VERIFY_CACHE_MS + 1)).resolves.toBe(true);
      await expect(verifies(service, key, T0 + 100 + LAST_USED_WRITE_INTERVAL_MS - 1)).resolves.toBe(true);
      for (let tick = 0; tick < 5; tick++) await new Promise((resolve) => setImmediate(resolve));
      expect(update).toHaveBeenCalledTimes(1);
      expect(await lastUsedAt()).toBe(T0 + 100);

      await expect(verifies(service, key, T0 + 100 + LAST_USED_WRITE_INTERVAL_MS)).resolves.toBe(true);
      await eventually(async () => (await lastUsedAt()) === T0 + 100 + LAST_USED_WRITE_INTERVAL_MS);
      expect(update).toHaveBeenCalledTimes(2);
      expect(LAST_USED_WRITE_INTERVAL_MS).toBeLessThanOrEqual(60_000);
    });

    it('is not written for a refused key', async () => {
      const { key, record } = await service.create('client-a', {}, { now: T0 });
      await service.revoke(String(record.id), { now: T0 + 1 });
      const update = jest.spyOn(repository, 'update');

      await expect(verifies(service, key, T0 + 2)).resolves.toBe(false);
      await expect(verifies(service, 'pet_unknown-0123456789abcdef', T0 + 2)).resolves.toBe(false);

      expect(update).not.toHaveBeenCalled();
      expect((await row(record.id)).lastUsedAt).toBeNull();
    });

    it('is shown by list', async () => {
      const { key } = await service.create('client-a', {}, { now: T0 });
      await verifies(service, key, T0 + 5);

      await eventually(async () => (await service.list())[0].lastUsedAt === T0 + 5);
    });
  });

  describe('scopes, expiry and rotation', () => {
    it('keeps the scopes a key was made with, sorted and once each, and refuses what is no scope', async () => {
      const { key } = await service.create(
        'reader',
        { scopes: ['pets:read', 'audit:read', 'pets:read'] },
        { now: T0 },
      );

      await expect(service.verifyDigest(sha256Hex(key), T0)).resolves.toMatchObject({
        name: 'reader',
        scopes: new Set(['audit:read', 'pets:read']),
      });
      expect((await rows())[0].scopes).toBe('audit:read pets:read');
      for (const scope of ['pets', 'pets:delete', 'Pets:read', '*:read', 'pets:read pets:write'])
        await expect(apiKeyError(service.create('bad', { scopes: [scope] }))).resolves.toMatchObject({
          message: expect.stringContaining('is not a scope') as string,
        });
    });

    it('refuses a key from its expiry on, and trusts it no longer than that', async () => {
      const { key } = await service.create('short', { expiresAt: T0 + 500 }, { now: T0 });

      await expect(service.verifyDigest(sha256Hex(key), T0)).resolves.toMatchObject({ until: T0 + 500 });
      await expect(service.verifyDigest(sha256Hex(key), T0 + 500)).resolves.toBe('expired');
      await expect(
        apiKeyError(service.create('past', { expiresAt: T0 }, { now: T0 })),
      ).resolves.toMatchObject({
        message: 'the expiry must be in the future',
      });
    });

    it('gives new keys at most the maximum lifetime, and that when none is asked for', async () => {
      const capped = new ApiKeysService(repository, new Transactions(dataSource), { maxLifetimeDays: 1 });

      await expect(capped.create('default', {}, { now: T0 })).resolves.toMatchObject({
        record: { expiresAt: T0 + 86_400_000 },
      });
      await expect(
        apiKeyError(capped.create('long', { expiresAt: T0 + 86_400_001 }, { now: T0 })),
      ).resolves.toMatchObject({
        message: 'a key may live at most 1 days (API_KEY_MAX_LIFETIME_DAYS)',
      });
    });

    it('rotates: both secrets work during the grace, then only the new one', async () => {
      const { key: old, record } = await service.create('rotating', { scopes: ['pets:read'] }, { now: T0 });
      const { key: fresh } = await service.rotate(String(record.id), 60_000, { now: T0 + 1 });

      expect(fresh).not.toBe(old);
      for (const key of [old, fresh])
        await expect(service.verifyDigest(sha256Hex(key), T0 + 2)).resolves.toMatchObject({ id: record.id });
      await expect(service.verifyDigest(sha256Hex(old), T0 + 60_001)).resolves.toBe('expired');
      await expect(verifies(service, fresh, T0 + 60_001)).resolves.toBe(true);
      await expect(apiKeyError(service.rotate(String(record.id), 8 * 86_400_000))).resolves.toMatchObject({
        message: 'the grace period must be from 0 to 7 days',
      });
    });

    it('revokes both secrets of a key in its grace', async () => {
      const { key: old, record } = await service.create('rotating', {}, { now: T0 });
      const { key: fresh } = await service.rotate(String(record.id), 60_000, { now: T0 });
      await service.revoke(String(record.id), { now: T0 + 1 });

      for (const key of [old, fresh])
        await expect(service.verifyDigest(sha256Hex(key), T0 + 2)).resolves.toBe('revoked');
    });
  });
});
