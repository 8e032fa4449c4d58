import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { DataSource } from 'typeorm';
import { AUTH, startApp, tempDir, testDatabaseEnv, useApp } from './support/app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectError(res: request.Response, status: number, code: string, message?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.body).toEqual({ code, status, message: message ?? expect.any(String) });
}

describe('Health probes (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;
  let dir: ReturnType<typeof tempDir> | undefined;

  beforeEach(async () => {
    app = await startApp();
    http = app.getHttpServer();
  });

  afterEach(async () => {
    await app.close();
    dir?.cleanup();
    dir = undefined;
  });

  const READY = {
    status: 'ok',
    info: { database: { status: 'up' }, migrations: { status: 'up' } },
    error: {},
    details: { database: { status: 'up' }, migrations: { status: 'up' } },
  };

  it('GET /health/live is 200 while the process runs, never cached', async () => {
    const res = await request(http).get('/health/live');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
  });

  it('GET /health/ready is 200 when the database answers and every migration is applied', async () => {
    const res = await request(http).get('/health/ready');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual(READY);
  });

  it.each([
    ['no key', {}],
    ['a wrong key', { Authorization: 'Bearer wrong-key-0123456789abcdef' }],
    ['a valid key', AUTH],
  ])('the probes are public: %s is fine', async (_label, headers) => {
    expect((await request(http).get('/health/live').set(headers)).status).toBe(200);
    expect((await request(http).get('/health/ready').set(headers)).status).toBe(200);
  });

  it('the probes live outside /v1', async () => {
    expectError(await request(http).get('/v1/health/live').set(AUTH), 404, 'not_found');
    expectError(await request(http).get('/v1/health/ready').set(AUTH), 404, 'not_found');
  });

  it('the probes answer GET only', async () => {
    const res = await request(http).post('/health/ready');
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('ready is 503 in the Error shape while the database is unreachable, and recovers with it', async () => {
    // A database that outlives its connection: a file (or a PostgreSQL schema), not :memory:.
    await app.close();
    dir = tempDir();
    app = await startApp(testDatabaseEnv(join(dir.path, 'petstore.sqlite')));
    http = app.getHttpServer();
    const dataSource = app.get(DataSource);
    await dataSource.destroy();

    const down = await request(http).get('/health/ready');
    expectError(down, 503, 'service_unavailable', 'Not ready: failing checks: database, migrations.');
    expect(down.headers['cache-control']).toBe('no-store');
    expect(down.headers['retry-after']).toBe('2');
    expect((await request(http).get('/health/live')).status).toBe(200);

    await dataSource.initialize();
    const up = await request(http).get('/health/ready');
    expect(up.status).toBe(200);
    expect(up.body).toEqual(READY);
  });

  it('ready is 503 while a migration is not applied', async () => {
    await app.get(DataSource).undoLastMigration({ transaction: 'each' });
    expectError(
      await request(http).get('/health/ready'),
      503,
      'service_unavailable',
      'Not ready: failing checks: migrations.',
    );
  });

  it('the probes are operational, not API: the OpenAPI document leaves them out', async () => {
    const doc = (await request(http).get('/docs-json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((path) => path.startsWith('/health'))).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"servers":\[\{"url":"\/"/);
  });
});

describe('Request ids (e2e)', () => {
  const api = useApp();

  it.each([
    [
      '201 created',
      () => request(api.http).post('/v1/pets').set(AUTH).send({ name: 'Id', categoryId: 1 }),
      201,
    ],
    ['200 listed', () => request(api.http).get('/v1/pets').set(AUTH), 200],
    [
      '400 invalid JSON',
      () => request(api.http).post('/v1/pets').set(AUTH).type('json').send('{"name":'),
      400,
    ],
    ['401 without a key', () => request(api.http).get('/v1/pets'), 401],
    ['404 unknown route', () => request(api.http).get('/v1/nowhere').set(AUTH), 404],
    ['405 wrong method', () => request(api.http).delete('/v1/pets').set(AUTH), 405],
    [
      '413 too large',
      () =>
        request(api.http)
          .post('/v1/pets')
          .set(AUTH)
          .send({ name: 'x'.repeat(17 * 1024), categoryId: 1 }),
      413,
    ],
    ['415 not JSON', () => request(api.http).post('/v1/pets').set(AUTH).type('text/plain').send('Rex'), 415],
    ['200 health', () => request(api.http).get('/health/ready'), 200],
    ['200 docs', () => request(api.http).get('/docs-json'), 200],
  ] as const)('a new UUID is on every answer: %s', async (_label, send, status) => {
    const first = await send();
    const second = await send();
    expect([first.status, second.status]).toEqual([status, status]);
    expect(first.headers['x-request-id']).toMatch(UUID);
    expect(second.headers['x-request-id']).toMatch(UUID);
    expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
  });

  it.each([
    ['200', () => request(api.http).get('/v1/pets').set(AUTH)],
    ['401', () => request(api.http).get('/v1/pets')],
    [
      '413',
      () =>
        request(api.http)
          .post('/v1/pets')
          .set(AUTH)
          .send({ name: 'x'.repeat(17 * 1024) }),
    ],
  ])('a well-formed incoming id is echoed (%s)', async (_label, send) => {
    for (const id of ['abc', 'req-7f3a.01:XY_z', 'A'.repeat(128)]) {
      expect((await send().set('X-Request-Id', id)).headers['x-request-id']).toBe(id);
    }
  });

  it.each([
    ['too long', 'A'.repeat(129)],
    ['a space', 'abc 123'],
    ['a quote', 'abc"123'],
    ['a slash', '../etc'],
    ['empty', ''],
  ])('an incoming id with %s is replaced by a new one', async (_label, id) => {
    const res = await request(api.http).get('/v1/pets').set(AUTH).set('X-Request-Id', id);
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(UUID);
  });
});

describe('Security headers, CORS and API docs (e2e)', () => {
  let app: NestExpressApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(env: Record<string, string> = {}): Promise<App> {
    app = await startApp(env);
    return app.getHttpServer();
  }

  it.each(['/v1/pets', '/health/live', '/docs-json'])(
    'the API header set on %s, no x-powered-by',
    async (path) => {
      const res = await request(await boot())
        .get(path)
        .set(AUTH);
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    },
  );

  it('the page policy on /docs/, no x-powered-by', async () => {
    const res = await request(await boot()).get('/docs/');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it("Swagger UI fits helmet's policy: only same-origin scripts, no upgrade to https on plain HTTP", async () => {
    const res = await request(await boot()).get('/docs/');
    expect(res.status).toBe(200);
    const scripts = [...res.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\.\/[\w.-]+\.js"/);
      expect(body.trim()).toBe('');
    }
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });

  describe('CORS', () => {
    const ORIGIN = 'https://app.example.org';

    it('is off by default: no CORS headers, and a preflight is an ordinary 405', async () => {
      const http = await boot();
      const res = await request(http).get('/v1/pets').set(AUTH).set('Origin', ORIGIN);
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await request(http)
        .options('/v1/pets')
        .set('Origin', ORIGIN)
        .set('Access-Control-Request-Method', 'POST');
      expectError(preflight, 405, 'method_not_allowed');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('allows the configured origins only', async () => {
      const http = await boot({ CORS_ORIGINS: `${ORIGIN},http://localhost:5173` });

      const allowed = await request(http).get('/v1/pets').set(AUTH).set('Origin', ORIGIN);
      expect(allowed.status).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe(ORIGIN);
      expect(allowed.headers.vary).toMatch(/Origin/);
      expect(allowed.headers['access-control-expose-headers']).toBe(
        'Location,Link,ETag,RateLimit,RateLimit-Policy,Retry-After,Idempotent-Replayed,X-Request-Id,Deprecation,Sunset',
      );

      const preflight = await request(http)
        .options('/v1/pets')
        .set('Origin', 'http://localhost:5173')
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type,idempotency-key,x-request-id');
      expect(preflight.status).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe('http://localhost:5173');
      expect(preflight.headers['access-control-allow-methods']).toBe('GET,HEAD,POST');
      expect(preflight.headers['access-control-allow-headers']).toBe(
        'Authorization,Content-Type,Idempotency-Key,If-Match,X-Request-Id',
      );

      // The methods follow the routes: one animal is read, never created or deleted.
      const onePet = await request(http)
        .options('/v1/pets/1')
        .set('Origin', ORIGIN)
        .set('Access-Control-Request-Method', 'GET');
      expect(onePet.status).toBe(204);
      expect(onePet.headers['access-control-allow-methods']).toBe('GET,HEAD,PATCH');
      expect(preflight.headers['access-control-max-age']).toBe('600');

      for (const origin of ['https://evil.example.org', 'https://app.example.org.evil.example', 'null']) {
        const refused = await request(http).get('/v1/pets').set(AUTH).set('Origin', origin);
        expect(refused.headers['access-control-allow-origin']).toBeUndefined();
        const refusedPreflight = await request(http)
          .options('/v1/pets')
          .set('Origin', origin)
          .set('Access-Control-Request-Method', 'POST');
        expect(refusedPreflight.headers['access-control-allow-origin']).toBeUndefined();
      }
    });
  });

  it('SWAGGER_ENABLED=false takes Swagger UI and the OpenAPI document away (404 not_found)', async () => {
    const http = await boot({ SWAGGER_ENABLED: 'false' });
    for (const path of ['/docs', '/docs/', '/docs/swagger-ui-init.js', '/docs-json', '/docs-yaml']) {
      expectError(await request(http).get(path), 404, 'not_found');
    }
    expect((await request(http).get('/v1/pets').set(AUTH)).status).toBe(200);
    expect((await request(http).get('/health/ready')).status).toBe(200);
  });
});
