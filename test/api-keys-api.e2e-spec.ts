import request from 'supertest';
import { KEY_SETUP } from '../src/auth/auth.module';
import type { KeySetup } from '../src/auth/key-setup';
import { AUTH, dropTestSchemas, useApp } from './support/app';
import { ContractValidator } from './support/openapi';

const KEY = /^pet_[A-Za-z0-9_-]{43}$/;
const EXPIRES_AT_RULE =
  'expiresAt must be an RFC 3339 date-time with an offset, such as 2030-01-01T00:00:00Z';
/** ISO 8601 forms and impossible times that Date.parse reads, or half reads; RFC 3339 has none of them. */
const NOT_RFC_3339 = [
  '2099-W01-1',
  '20990101T000000Z',
  '2099-01-01T00Z',
  '2099-01-01T00:00:00,5Z',
  '2099',
  '2099-01-01',
  '2099-01-01T00:00:00',
  '2099-02-30T00:00:00Z',
  '2099-01-01T24:00:00Z',
];

/** /v1/api-keys through the real app: what a key with keys:manage can do, and cannot. */
describe('API keys through the API (e2e)', () => {
  const target = useApp();
  afterAll(dropTestSchemas);
  let contract: ContractValidator;
  beforeAll(async () => {
    contract = await ContractValidator.forPaths('/api-keys');
  });

  const as = (authorization: string) => ({
    get: (path: string) => request(target.http).get(`/v1${path}`).set('Authorization', authorization),
    post: (path: string, body: object = {}) =>
      request(target.http).post(`/v1${path}`).set('Authorization', authorization).send(body),
    patch: (path: string, body: object) =>
      request(target.http)
        .patch(`/v1${path}`)
        .set('Authorization', authorization)
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify(body)),
    delete: (path: string) => request(target.http).delete(`/v1${path}`).set('Authorization', authorization),
  });
  const admin = as(AUTH.Authorization);
  const checked = async (response: request.Test) => {
    const res = await response;
    contract.check(res);
    return res;
  };
  const make = async (body: object) => {
    const res = await checked(admin.post('/api-keys', body));
    expect(res.status).toBe(201);
    return res.body as { id: number; secret: string; scopes: string[] };
  };

  it('makes a key with its scopes, its secret in that answer only', async () => {
    const res = await checked(admin.post('/api-keys', { name: 'reader', scopes: ['pets:read'] }));

    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/v1/api-keys/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'reader',
      scopes: ['pets:read'],
      secret: expect.stringMatching(KEY),
    });
    const reader = as(`Bearer ${res.body.secret}`);
    expect((await reader.get('/pets')).status).toBe(200);
    expect((await reader.post('/pets', { name: 'Rex', categoryId: 1 })).status).toBe(403);

    const got = await checked(admin.get(`/api-keys/${res.body.id}`));
    // lastUsedAt is written after the answer: it may not be there yet.
    expect(got.body).toMatchObject({
      id: res.body.id,
      name: 'reader',
      prefix: (res.body.secret as string).slice(0, 12),
      scopes: ['pets:read'],
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as string,
    });
    expect(got.body).not.toHaveProperty('secret');
    const listed = await checked(admin.get('/api-keys?limit=100'));
    expect(JSON.stringify(listed.body)).not.toContain(res.body.secret);
  });

  it('lets a key grant only scopes it holds', async () => {
    const manager = await make({ name: 'manager', scopes: ['keys:manage', 'pets:read'] });
    const asManager = as(`Bearer ${manager.secret}`);

    expect((await checked(asManager.post('/api-keys', { name: 'ok', scopes: ['pets:read'] }))).status).toBe(
      201,
    );
    const refused = await checked(
      asManager.post('/api-keys', { name: 'more', scopes: ['pets:read', 'pets:write'] }),
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('The API key cannot grant the scope pets:write, which it lacks.');
    expect(refused.headers['www-authenticate']).toContain('scope="pets:write"');
    const widened = await checked(
      asManager.patch(`/api-keys/${manager.id}`, { scopes: ['keys:manage', 'audit:read'] }),
    );
    expect(widened.status).toBe(403);
  });

  it('changes, rotates and revokes only keys whose every scope it holds: no key gets wider powers', async () => {
    const manager = as(`Bearer ${(await make({ name: 'manager', scopes: ['keys:manage'] })).secret}`);
    const wide = await make({ name: 'wide', scopes: ['keys:manage', 'pets:write'] });
    const auditor = await make({ name: 'auditor', scopes: ['audit:read', 'keys:manage'] });
    const refusal = (scope: string) => ({
      code: 'insufficient_scope',
      status: 403,
      message: `The API key cannot manage a key with the scope ${scope}, which it lacks.`,
    });

    for (const [target, scope] of [
      [wide, 'pets:write'],
      [auditor, 'audit:read'],
    ] as const) {
      for (const res of [
        await checked(manager.post(`/api-keys/${target.id}/rotate`, {})),
        await checked(manager.patch(`/api-keys/${target.id}`, { name: 'mine now' })),
        await checked(manager.patch(`/api-keys/${target.id}`, { scopes: ['keys:manage'] })),
        await checked(manager.delete(`/api-keys/${target.id}`)),
      ]) {
        expect([res.status, res.body]).toEqual([403, refusal(scope)]);
        expect(res.headers['www-authenticate']).toContain(`scope="${scope}"`);
      }
    }
    const untouched = (await checked(admin.get(`/api-keys/${wide.id}`))).body as {
      name: string;
      revokedAt?: string;
    };
    expect([untouched.name, untouched.revokedAt]).toEqual(['wide', undefined]);
    expect((await as(`Bearer ${wide.secret}`).get('/api-keys')).status).toBe(200);

    const peer = await make({ name: 'peer', scopes: ['keys:manage'] });
    expect((await checked(manager.post(`/api-keys/${peer.id}/rotate`, {}))).status).toBe(200);
    expect((await checked(manager.delete(`/api-keys/${peer.id}`))).status).toBe(204);
  });

  it('answers racing rotations of a key 200, or 409 api_key_changed to those that lost, never 400', async () => {
    const key = await make({ name: 'raced', scopes: ['pets:read'] });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => checked(admin.post(`/api-keys/${key.id}/rotate`, {}))),
    );

    expect(answers.filter((res) => res.status === 200).length).toBeGreaterThan(0);
    for (const res of answers.filter((answer) => answer.status !== 200))
      expect([res.status, res.body.code]).toEqual([409, 'api_key_changed']);
    const { prefix } = (await checked(admin.get(`/api-keys/${key.id}`))).body as { prefix: string };
    const last = answers.find((res) => (res.body as { prefix?: string }).prefix === prefix)!;
    expect((await as(`Bearer ${(last.body as { secret: string }).secret}`).get('/pets')).status).toBe(200);
  });

  it('writes no audit event for a change that changes nothing', async () => {
    const key = await make({ name: 'same', scopes: ['pets:read'] });
    const audited = async () =>
      (
        (await admin.get('/audit-events?resource=api-keys&limit=100')).body as Array<{ resourceId: number }>
      ).filter((event) => event.resourceId === key.id).length;
    const before = await audited();

    const res = await checked(admin.patch(`/api-keys/${key.id}`, { name: 'same', scopes: ['pets:read'] }));
    expect(res.status).toBe(200);
    expect(await audited()).toBe(before);
    expect((await checked(admin.patch(`/api-keys/${key.id}`, { name: 'other' }))).status).toBe(200);
    expect(await audited()).toBe(before + 1);
  });

  it.each(['foo:read', 'pets:manage', 'events:write'])(
    'refuses to grant %s, which no operation asks for, with 400 naming it',
    async (scope) => {
      const key = await make({ name: 'scoped', scopes: ['pets:read'] });
      const message = `${scope} is not a scope of this service`;
      const refusal = {
        code: 'validation_failed',
        status: 400,
        message: `Validation failed: ${message}.`,
        details: [{ field: 'scopes', message }],
      };
      const created = await checked(admin.post('/api-keys', { name: 'x', scopes: ['pets:read', scope] }));
      expect([created.status, created.body]).toEqual([400, refusal]);
      const changed = await checked(admin.patch(`/api-keys/${key.id}`, { scopes: [scope] }));
      expect([changed.status, changed.body]).toEqual([400, refusal]);
      expect((await checked(admin.get(`/api-keys/${key.id}`))).body.scopes).toEqual(['pets:read']);
    },
  );

  it('changes scopes, name and expiry, effective at once on this instance', async () => {
    const key = await make({ name: 'changing', scopes: ['pets:read', 'pets:write'] });
    const client = as(`Bearer ${key.secret}`);
    expect((await client.get('/pets')).status).toBe(200);

    const changed = await checked(
      admin.patch(`/api-keys/${key.id}`, { name: 'renamed', scopes: ['pets:write'] }),
    );
    expect(changed.body).toMatchObject({ name: 'renamed', scopes: ['pets:write'] });
    expect((await client.get('/pets')).status).toBe(403);

    const expiry = new Date(Date.now() + 3_600_000).toISOString();
    expect((await checked(admin.patch(`/api-keys/${key.id}`, { expiresAt: expiry }))).body.expiresAt).toBe(
      expiry,
    );
    expect(
      (await checked(admin.patch(`/api-keys/${key.id}`, { expiresAt: null }))).body.expiresAt,
    ).toBeUndefined();
  });

  it('rotates: both secrets work in the grace; without one the old secret is 401 expired', async () => {
    const key = await make({ name: 'rotating', scopes: ['pets:read'] });
    const graced = await checked(admin.post(`/api-keys/${key.id}/rotate`, { graceSeconds: 3600 }));
    expect(graced.status).toBe(200);
    expect(graced.body.secret).toMatch(KEY);
    expect(graced.body.previousSecretExpiresAt).toBeDefined();
    for (const secret of [key.secret, graced.body.secret as string])
      expect((await as(`Bearer ${secret}`).get('/pets')).status).toBe(200);

    const cut = await checked(admin.post(`/api-keys/${key.id}/rotate`, { graceSeconds: 0 }));
    const old = await as(`Bearer ${graced.body.secret}`).get('/pets');
    expect(old.status).toBe(401);
    expect(old.headers['www-authenticate']).toContain('error_description="The access token expired"');
    expect((await as(`Bearer ${cut.body.secret}`).get('/pets')).status).toBe(200);
  });

  it('revokes both secrets; a revoked key is 409 to change, 204 to revoke again, and stays listed', async () => {
    const key = await make({ name: 'leaked', scopes: ['pets:read'] });
    const rotated = await checked(admin.post(`/api-keys/${key.id}/rotate`, {}));

    expect((await checked(admin.delete(`/api-keys/${key.id}`))).status).toBe(204);
    for (const secret of [key.secret, rotated.body.secret as string])
      expect((await as(`Bearer ${secret}`).get('/pets')).status).toBe(401);
    expect((await checked(admin.delete(`/api-keys/${key.id}`))).status).toBe(204);
    for (const res of [
      await checked(admin.patch(`/api-keys/${key.id}`, { name: 'again' })),
      await checked(admin.post(`/api-keys/${key.id}/rotate`, {})),
    ])
      expect(res.body).toMatchObject({ code: 'api_key_revoked', status: 409 });
    expect((await checked(admin.get(`/api-keys/${key.id}`))).body.revokedAt).toBeDefined();
  });

  it.each([
    [{ name: 'x', scopes: [] }, 'scopes'],
    [{ name: 'x', scopes: ['pets'] }, 'scopes'],
    [{ name: 'x', scopes: ['pets:read'], expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
    [{ name: 'x', scopes: ['pets:read'], expiresAt: 'tomorrow' }, 'expiresAt'],
    [{ name: ' ', scopes: ['pets:read'] }, 'name'],
    [{ name: 'x', scopes: ['pets:read'], secret: 'pet_mine' }, 'secret'],
  ])('refuses %j with 400 naming %s', async (body, field) => {
    const res = await checked(admin.post('/api-keys', body));
    expect(res.status).toBe(400);
    expect((res.body.details as { field: string }[]).map((detail) => detail.field)).toContain(field);
  });

  it.each(NOT_RFC_3339)(
    'refuses the expiry %s on create and change with 400 naming expiresAt, storing nothing',
    async (expiresAt) => {
      const key = await make({ name: 'dated', scopes: ['pets:read'] });
      const before = await checked(admin.get('/api-keys?limit=100'));
      const refusal = {
        code: 'validation_failed',
        status: 400,
        message: `Validation failed: ${EXPIRES_AT_RULE}.`,
        details: [{ field: 'expiresAt', message: EXPIRES_AT_RULE }],
      };

      const created = await checked(admin.post('/api-keys', { name: 'x', scopes: ['pets:read'], expiresAt }));
      expect([created.status, created.body]).toEqual([400, refusal]);
      const changed = await checked(admin.patch(`/api-keys/${key.id}`, { expiresAt }));
      expect([changed.status, changed.body]).toEqual([400, refusal]);
      expect((await checked(admin.get('/api-keys?limit=100'))).body).toEqual(before.body);
    },
  );

  it('reads an expiry in any offset as the instant it names', async () => {
    const key = await make({
      name: 'offset',
      scopes: ['pets:read'],
      expiresAt: '2099-01-01T01:00:00.5+01:00',
    });
    expect(key).toMatchObject({ expiresAt: '2099-01-01T00:00:00.500Z' });
    const changed = await checked(
      admin.patch(`/api-keys/${key.id}`, { expiresAt: '2098-12-31t19:30:00-04:30' }),
    );
    expect(changed.body).toMatchObject({ expiresAt: '2099-01-01T00:00:00.000Z' });
  });

  it('pages the keys with Link rel="next" and answers 404 for a key that does not exist', async () => {
    await make({ name: 'one more', scopes: ['pets:read'] });
    const first = await checked(admin.get('/api-keys?limit=1'));
    expect(first.body).toHaveLength(1);
    const next = /<\/v1([^>]+)>; rel="next"/.exec(first.headers.link)![1];
    const second = await checked(admin.get(next));
    expect((second.body as { id: number }[])[0].id).toBeGreaterThan((first.body as { id: number }[])[0].id);
    expect((await checked(admin.get('/api-keys/abc'))).status).toBe(400);
  });

  it('names the key in a 404, as every collection does', async () => {
    const missing = { code: 'not_found', message: 'No API key has id 999999.', status: 404 };
    for (const res of [
      await checked(admin.get('/api-keys/999999')),
      await checked(admin.patch('/api-keys/999999', { name: 'x' })),
      await checked(admin.post('/api-keys/999999/rotate', {})),
      await checked(admin.delete('/api-keys/999999')),
    ])
      expect([res.status, res.body]).toEqual([404, missing]);
  });
});

/** Without API_KEYS: the stored keys are the only way in, and the service keeps one that can manage keys. */
describe('the last key that can manage keys (e2e)', () => {
  const target = useApp({ API_KEYS: '' });
  afterAll(dropTestSchemas);
  const as = (secret: string) => ({
    patch: (path: string, body: object) =>
      request(target.http)
        .patch(`/v1${path}`)
        .set('Authorization', `Bearer ${secret}`)
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify(body)),
    post: (path: string, body: object) =>
      request(target.http).post(`/v1${path}`).set('Authorization', `Bearer ${secret}`).send(body),
    delete: (path: string) =>
      request(target.http).delete(`/v1${path}`).set('Authorization', `Bearer ${secret}`),
  });
  const last = {
    code: 'last_key_manager',
    status: 409,
    message:
      'This is the last active API key that can manage keys: it keeps keys:manage, no expiry and its life.',
  };

  it('cannot revoke, expire or narrow the last one; can once another can manage keys', async () => {
    const bootstrap = as(target.app.get<KeySetup>(KEY_SETUP).newKey!);
    const listed = await request(target.http)
      .get('/v1/api-keys')
      .set('Authorization', `Bearer ${target.app.get<KeySetup>(KEY_SETUP).newKey!}`);
    const [{ id }] = listed.body as Array<{ id: number }>;

    for (const res of [
      await bootstrap.delete(`/api-keys/${id}`),
      await bootstrap.patch(`/api-keys/${id}`, { scopes: ['pets:read'] }),
      await bootstrap.patch(`/api-keys/${id}`, { expiresAt: '2099-01-01T00:00:00Z' }),
    ])
      expect([res.status, res.body]).toEqual([409, last]);
    expect((await bootstrap.patch(`/api-keys/${id}`, { name: 'still the bootstrap' })).status).toBe(200);
    // A key that holds keys:manage alone cannot touch the bootstrap key, which holds every scope.
    const manager = await bootstrap.post('/api-keys', { name: 'manager', scopes: ['keys:manage'] });
    const narrow = as((manager.body as { secret: string }).secret);
    const rotated = await narrow.post(`/api-keys/${id}/rotate`, {});
    expect([rotated.status, rotated.body.code]).toEqual([403, 'insufficient_scope']);
    expect((await narrow.delete(`/api-keys/${manager.body.id}`)).status).toBe(204);

    const other = await bootstrap.post('/api-keys', { name: 'admin', scopes: ['keys:manage', 'pets:read'] });
    expect(other.status).toBe(201);
    expect((await bootstrap.patch(`/api-keys/${id}`, { scopes: ['pets:read'] })).status).toBe(200);
    const admin = as((other.body as { secret: string }).secret);
    expect([(await admin.delete(`/api-keys/${other.body.id}`)).status]).toEqual([409]);
    expect((await admin.delete(`/api-keys/${id}`)).status).toBe(204);
  });
});
