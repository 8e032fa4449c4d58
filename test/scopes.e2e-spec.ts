import type { OpenAPIObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ApiKeysService, generateApiKey, hashApiKey } from '../src/auth/api-keys.service';
import { AddApiKeyScopes1796428800000 } from '../src/auth/migrations/1796428800000-AddApiKeyScopes';
import { loadConfig } from '../src/config/app-config';
import { dataSourceOptions, openDatabase } from '../src/database/database.options';
import { SCHEMAS } from '../src/features';
import { SCOPE_FORMAT, SCOPES_EXTENSION, SERVICE_SCOPES } from '../src/common/scopes';
import { AUTH, dropTestSchemas, startApp, testDatabaseEnv, useApp } from './support/app';
import { sampleBody } from './support/samples';

const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;

interface Operation {
  name: string;
  method: (typeof METHODS)[number];
  path: string;
  scope: string;
  body?: string;
}

/**
 * Every operation of the document the app serves (its own and every generated module's), called
 * with a key that holds its scope and with one that holds every other scope: the first is
 * answered as usual, the second 403 `insufficient_scope` naming the scope, before any other check.
 */
describe('key scopes, operation by operation', () => {
  const target = useApp();
  afterAll(dropTestSchemas);
  let document: OpenAPIObject;
  let operations: Operation[];
  let allScopes: string[];

  const keyWith = async (scopes: string[]) =>
    `Bearer ${(await target.app.get(ApiKeysService).create(`scopes ${scopes.length}`, { scopes })).key}`;

  beforeAll(async () => {
    document = (await request(target.http).get('/docs-json').expect(200)).body as OpenAPIObject;
    operations = [];
    for (const [path, item] of Object.entries(document.paths))
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const schema = (operation.requestBody as { content?: Record<string, { schema?: { $ref?: string } }> })
          ?.content;
        const ref = schema && Object.values(schema)[0]?.schema?.$ref;
        operations.push({
          name: operation.operationId!,
          method,
          // Any id: the 403 comes first; with the scope, a 404 is an answer as usual.
          path: `/v1${path.replace(/\{[^}]+\}/g, '1')}`,
          scope: ((operation as unknown as Record<string, string[] | undefined>)[SCOPES_EXTENSION] ?? [
            '',
          ])[0],
          body: ref ? JSON.stringify(await sampleBody(ref.split('/').pop()!)) : undefined,
        });
      }
    allScopes = [...new Set([...operations.map((op) => op.scope), ...SERVICE_SCOPES])];
  });

  const send = (op: Operation, authorization: string) => {
    const call = request(target.http)[op.method](op.path).set('Authorization', authorization);
    if (op.body === undefined) return call;
    return call
      .set('Content-Type', op.method === 'patch' ? 'application/merge-patch+json' : 'application/json')
      .send(op.body);
  };

  it('states one scope for every operation that needs a key, and covers them all', () => {
    expect(operations.length).toBeGreaterThanOrEqual(4);
    expect(operations.filter((op) => !SCOPE_FORMAT.test(op.scope)).map((op) => op.name)).toEqual([]);
    for (const op of operations) {
      const collection = op.path.split('/')[2];
      if (!(SERVICE_SCOPES as readonly string[]).includes(op.scope))
        expect([op.name, op.scope]).toEqual([
          op.name,
          `${collection}:${op.method === 'get' ? 'read' : 'write'}`,
        ]);
    }
  });

  it('answers a key with the scope as usual, and one without it 403 naming the scope', async () => {
    const results: string[] = [];
    for (const op of operations) {
      // The key must hold what the body asks it to grant (a new key's scopes), every scope of a key
      // it changes, and read the events it has an endpoint sent (every event, unless the body names
      // types), as well.
      const changed = op.path.startsWith('/v1/api-keys/')
        ? (await target.app.get(ApiKeysService).get(1)).scopes.split(' ')
        : [];
      const granted = [
        ...(op.body === undefined ? [] : ((JSON.parse(op.body) as { scopes?: string[] }).scopes ?? [])),
        ...changed,
        ...(op.path.startsWith('/v1/webhook-endpoints') ? allScopes.filter((s) => s.endsWith(':read')) : []),
      ];
      const holder = await send(op, await keyWith([op.scope, ...granted]));
      const others = await send(op, await keyWith(allScopes.filter((scope) => scope !== op.scope)));
      results.push(`${op.name} ${holder.status} ${others.status}`);
      expect([op.name, holder.status]).not.toEqual([op.name, 403]);
      expect([op.name, holder.status]).not.toEqual([op.name, 401]);
      expect(holder.status).toBeLessThan(500);
      expect(others.body).toEqual({
        code: 'insufficient_scope',
        message: `The API key lacks the scope ${op.scope}, which this operation needs.`,
        status: 403,
      });
      expect(others.headers['www-authenticate']).toBe(
        `Bearer realm="petstore", error="insufficient_scope", scope="${op.scope}"`,
      );
    }
    expect(results).toHaveLength(operations.length);
  });

  it('lets a key be given every scope an operation asks for, and an endpoint every event a change made', async () => {
    const post = (path: string, body: object) => request(target.http).post(`/v1${path}`).set(AUTH).send(body);
    for (const scope of allScopes)
      expect([scope, (await post('/api-keys', { name: scope, scopes: [scope] })).status]).toEqual([
        scope,
        201,
      ]);
    const events = await request(target.http).get('/v1/events?limit=100').set(AUTH).expect(200);
    const published = [...new Set((events.body as { type: string }[]).map((event) => event.type))];
    expect(published).toContain('pet.created');
    const eventTypes = published.flatMap((type) => [type, `${type.split('.')[0]}.*`]).slice(0, 50);
    const made = await post('/webhook-endpoints', {
      url: 'https://93.184.216.34/in',
      eventTypes,
      enabled: false,
    });
    expect([made.status, made.body.eventTypes]).toEqual([201, eventTypes]);
  });

  it('gives API_KEYS entries and keys made without scopes every scope', async () => {
    const unscoped = `Bearer ${(await target.app.get(ApiKeysService).create('everything')).key}`;
    for (const op of operations)
      for (const authorization of [AUTH.Authorization, unscoped])
        expect([op.name, (await send(op, authorization)).status]).not.toEqual([op.name, 403]);
  });
});

describe('a database made before keys had scopes', () => {
  afterAll(dropTestSchemas);

  it('upgrades with its keys still working, with every scope', async () => {
    const env = testDatabaseEnv(join(mkdtempSync(join(tmpdir(), 'petstore-scopes-')), 'pets.sqlite'));
    const { database } = loadConfig(env);
    const options = dataSourceOptions(database, SCHEMAS);
    const before = await openDatabase(database, {
      ...options,
      migrations: (options.migrations as (new () => object)[]).filter(
        (m) => m !== AddApiKeyScopes1796428800000,
      ),
    });
    const key = generateApiKey();
    try {
      // As the service made keys then: no scopes, no expiry.
      await before.query(
        ...before.driver.escapeQueryWithParameters(
          'INSERT INTO api_keys (name, prefix, key_hash, created_at) VALUES (:name, :prefix, :hash, :now)',
          { name: 'made before scopes', prefix: key.slice(0, 12), hash: hashApiKey(key), now: Date.now() },
          {},
        ),
      );
    } finally {
      await before.destroy();
    }

    const app = await startApp(env);
    try {
      const authorization = `Bearer ${key}`;
      await request(app.getHttpServer()).get('/v1/pets').set('Authorization', authorization).expect(200);
      await request(app.getHttpServer())
        .post('/v1/pets')
        .set('Authorization', authorization)
        .send(await sampleBody('NewPet'))
        .expect(201);
      const [stored] = await app.get(ApiKeysService).list();
      expect(stored).toMatchObject({ name: 'made before scopes', scopes: '*', expiresAt: null });
    } finally {
      await app.close();
    }
  });
});
