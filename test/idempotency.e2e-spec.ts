import request from 'supertest';
import { hashApiKey } from '../src/auth/api-keys.service';
import {
  ClaimedKey,
  IdempotencyService,
  IN_FLIGHT_LEASE_MS,
  LEASE_RENEWAL_MS,
} from '../src/idempotency/idempotency.service';
import { requestDigest } from '../src/idempotency/idempotent-requests';
import { AUTH, TEST_KEY, useApp } from './support/app';

const OTHER_KEY = 'other-key-0123456789abcdef';

describe('Idempotent creates with Idempotency-Key (e2e)', () => {
  const api = useApp({ API_KEYS: `${TEST_KEY},${OTHER_KEY}` });

  let counter = 0;
  const uniqueKey = () => `key-${Date.now()}-${++counter}`;
  const create = (body: object, idempotencyKey?: string, auth = AUTH) => {
    const req = request(api.http).post('/v1/pets').set(auth);
    if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
    return req.send(body);
  };
  const countNamed = async (name: string) => {
    const all = await request(api.http).get('/v1/pets?limit=100').set(AUTH);
    return (all.body as Array<{ name: string }>).filter((pet) => pet.name === name).length;
  };

  it('replays the original 201 for the same key and body, and creates nothing more', async () => {
    const key = uniqueKey();
    const first = await create({ name: 'Once', categoryId: 3, status: 'pending' }, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const again = await create({ status: 'pending', categoryId: 3, name: 'Once' }, `"${key}"`);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await countNamed('Once')).toBe(1);
  });

  it('answers 422 when the key is reused with another body', async () => {
    const key = uniqueKey();
    expect((await create({ name: 'First body', categoryId: 1 }, key)).status).toBe(201);
    const res = await create({ name: 'Second body', categoryId: 1 }, key);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 'idempotency_key_reused',
      message: 'This Idempotency-Key was already used with a different request body.',
      status: 422,
    });
    expect(await countNamed('Second body')).toBe(0);
  });

  it('keeps the keys of different API keys apart', async () => {
    const key = uniqueKey();
    const mine = await create({ name: 'Shared key', categoryId: 1 }, key);
    const theirs = await create({ name: 'Shared key', categoryId: 1 }, key, {
      Authorization: `Bearer ${OTHER_KEY}`,
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  it('changes nothing without the header', async () => {
    await create({ name: 'No header', categoryId: 1 });
    await create({ name: 'No header', categoryId: 1 });
    expect(await countNamed('No header')).toBe(2);
  });

  it('50 concurrent retries with one key create exactly one animal', async () => {
    const key = uniqueKey();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => create({ name: 'Stampede', categoryId: 9 }, key)),
    );
    const statuses = responses.map((res) => res.status);
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true);
    const created = responses.filter((res) => res.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((res) => res.body.id)).size).toBe(1);
    for (const conflict of responses.filter((res) => res.status === 409)) {
      expect(conflict.body).toEqual({
        code: 'idempotency_conflict',
        message: 'A request with this Idempotency-Key is still being processed.',
        status: 409,
      });
      expect(Number(conflict.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(conflict.headers['retry-after'])).toBeLessThanOrEqual(IN_FLIGHT_LEASE_MS / 1000);
    }
    expect(await countNamed('Stampede')).toBe(1);
    const retry = await create({ name: 'Stampede', categoryId: 9 }, key);
    expect(retry.status).toBe(201);
    expect(retry.body.id).toBe(created[0].body.id);
  });

  it('a claim whose request stopped renewing it (its instance died) is free again once its lease ends', async () => {
    const key = uniqueKey();
    const body = { name: 'Orphaned', categoryId: 4 };
    // What a killed instance leaves: a claim in flight that nobody renews.
    const service = api.app.get(IdempotencyService);
    const orphan = (await service.claim(hashApiKey(TEST_KEY), key, requestDigest(body))) as {
      claimed: ClaimedKey;
    };
    const held = await create(body, key);
    expect(held.status).toBe(409);
    const wait = Number(held.headers['retry-after']);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(IN_FLIGHT_LEASE_MS / 1000);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 100));
    const retried = await create(body, key);
    expect(retried.status).toBe(201);
    expect(await countNamed('Orphaned')).toBe(1);
    expect((await create(body, key)).body).toEqual(retried.body);
    // Had the first request been alive after all, its answer could no longer be stored: its
    // transaction fails and rolls back, so the key never has two animals.
    const late = service.complete(orphan.claimed, { statusCode: 201, body: {}, location: null });
    await expect(late).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('a request that runs longer than the lease keeps its key: it renews it', async () => {
    const service = api.app.get(IdempotencyService);
    const owner = hashApiKey(TEST_KEY);
    const key = uniqueKey();
    const { claimed } = (await service.claim(owner, key, requestDigest({ x: 1 }))) as { claimed: ClaimedKey };
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_RENEWAL_MS));
      expect(await service.renew(claimed)).toBe(true);
    }
    // Past the first lease, renewed: still held.
    const second = await service.claim(owner, key, requestDigest({ x: 1 })).catch((error: unknown) => error);
    expect(second).toMatchObject({ code: 'idempotency_conflict' });
  });

  it('a request that fails validation releases its key for a corrected retry', async () => {
    const key = uniqueKey();
    const invalid = await create({ name: '', categoryId: 1 }, key);
    expect(invalid.status).toBe(400);
    const valid = await create({ name: 'Corrected', categoryId: 1 }, key);
    expect(valid.status).toBe(201);
    expect(valid.headers['idempotent-replayed']).toBeUndefined();
  });

  it.each(['', 'has space', 'x'.repeat(256), '"unterminated', 'a,b"c'])(
    'refuses a malformed Idempotency-Key %p with 400 and creates nothing',
    async (key) => {
      const res = await create({ name: 'Bad key', categoryId: 1 }, key);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'validation_failed', status: 400 });
      expect(res.body.details).toEqual([{ field: 'Idempotency-Key', message: expect.any(String) }]);
      expect(await countNamed('Bad key')).toBe(0);
    },
  );

  it('authentication still comes first', async () => {
    const res = await request(api.http)
      .post('/v1/pets')
      .set('Idempotency-Key', uniqueKey())
      .send({ name: 'x' });
    expect(res.status).toBe(401);
  });
});
