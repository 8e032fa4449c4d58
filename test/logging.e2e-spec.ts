import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { DataSource } from 'typeorm';
import { PRIVATE_WEBHOOKS, reportStart, TRUST_ANY_PROXY } from '../src/app/startup-report';
import { loadConfig } from '../src/config/app-config';
import { AUTH, startApp, TEST_KEY } from './support/app';
import { captureLogs, CapturedLogs, LogLine } from './support/logs';
import { exchange, listenWithTimeouts } from './support/raw-http';

const WRONG_KEY = 'wrong-key-that-looks-real-0123456789';

describe('Request logs (e2e, captured output)', () => {
  let app: NestExpressApplication;
  let http: App;
  let logs: CapturedLogs;

  async function boot(env: Record<string, string> = {}): Promise<void> {
    logs = captureLogs();
    app = await startApp({ LOG_LEVEL: 'info', ...env }, { logDestination: logs.stream });
    http = app.getHttpServer();
  }

  afterEach(async () => {
    await app.close();
  });

  /** The lines written while handling the request with this id. */
  const linesOf = (id: string): LogLine[] => logs.lines().filter((line) => line.reqId === id);

  it('warns at start of each switch that lowers a guard: TRUST_PROXY=true, WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', async () => {
    const env = {
      NODE_ENV: 'production',
      DATABASE_PATH: ':memory:',
      TRUST_PROXY: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    };
    await boot(env);
    await app.listen(0, '127.0.0.1');
    reportStart(app, loadConfig({ API_KEYS: TEST_KEY, RATE_LIMIT_ENABLED: 'false', ...env }));

    const warnings = logs.lines().filter((line) => line.level === 'warn');
    expect(warnings.map((line) => line.msg)).toStrictEqual([TRUST_ANY_PROXY, PRIVATE_WEBHOOKS]);
    expect(warnings[1].msg).toMatch(
      /^WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets webhook endpoints be loopback/,
    );
  });

  it('writes one JSON line per request: method, route, url, status, duration and the request id', async () => {
    await boot();
    const created = await request(http).post('/v1/pets').set(AUTH).send({ name: 'Logged', categoryId: 3 });
    const read = await request(http)
      .get(`/v1/pets/${created.body.id}`)
      .set(AUTH)
      .set('X-Request-Id', 'trace-42');

    expect(linesOf(created.headers['x-request-id'])).toEqual([
      {
        level: 'info',
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        pid: process.pid,
        hostname: expect.any(String),
        reqId: created.headers['x-request-id'],
        method: 'POST',
        route: '/v1/pets',
        url: '/v1/pets',
        status: 201,
        durationMs: expect.any(Number),
        ip: expect.stringMatching(/127\.0\.0\.1$/),
        msg: expect.stringMatching(/^POST \/v1\/pets 201 \d+ms$/),
      },
    ]);
    expect(linesOf('trace-42')).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'GET',
        route: '/v1/pets/:petId',
        url: `/v1/pets/${created.body.id}`,
        status: 200,
      }),
    ]);
    expect(read.headers['x-request-id']).toBe('trace-42');
  });

  it('logs client errors as warn, with no route when none matched, body-parser errors included', async () => {
    await boot();
    const missing = await request(http).get('/v1/nowhere').set(AUTH);
    const tooLarge = await request(http)
      .post('/v1/pets')
      .set(AUTH)
      .send({ name: 'x'.repeat(17 * 1024), categoryId: 1 });

    expect(linesOf(missing.headers['x-request-id'])).toEqual([
      expect.objectContaining({ level: 'warn', method: 'GET', url: '/v1/nowhere', status: 404 }),
    ]);
    expect(linesOf(missing.headers['x-request-id'])[0]).not.toHaveProperty('route');
    expect(linesOf(tooLarge.headers['x-request-id'])).toEqual([
      expect.objectContaining({ level: 'warn', method: 'POST', url: '/v1/pets', status: 413 }),
    ]);
  });

  it('never writes a key or the Authorization header, not even for a 401 with a wrong key', async () => {
    await boot({ LOG_LEVEL: 'trace' });
    const wrong = await request(http).get('/v1/pets').set('Authorization', `Bearer ${WRONG_KEY}`);
    const right = await request(http).get('/v1/pets').set(AUTH);
    const inQuery = await request(http).get(`/v1/pets?limit=5&api_key=${WRONG_KEY}`);
    const inBody = await request(http)
      .post('/v1/pets')
      .set('Authorization', `Bearer ${WRONG_KEY}`)
      .send({ name: WRONG_KEY, categoryId: 1, apiKey: TEST_KEY });

    expect([wrong.status, right.status, inQuery.status, inBody.status]).toEqual([401, 200, 401, 401]);
    expect(linesOf(wrong.headers['x-request-id'])).toEqual([
      expect.objectContaining({ level: 'warn', status: 401, url: '/v1/pets' }),
    ]);
    expect(linesOf(inQuery.headers['x-request-id'])).toEqual([
      expect.objectContaining({ status: 401, url: '/v1/pets?limit=5&api_key=[Redacted]' }),
    ]);
    expect(logs.lines().length).toBeGreaterThanOrEqual(4);
    expect(logs.text()).not.toContain(WRONG_KEY);
    expect(logs.text()).not.toContain(TEST_KEY);
    expect(logs.text()).not.toMatch(/bearer/i);
    expect(logs.text()).not.toMatch(/authorization/i);
  });

  it('logs an unexpected error with its stack, under the id of its request, and answers 500', async () => {
    await boot();
    await app.get(DataSource).destroy();
    const res = await request(http).get('/v1/pets').set(AUTH).set('X-Request-Id', 'broken-1');

    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      code: 'internal_error',
      message: 'An unexpected error occurred.',
      status: 500,
    });
    const [error, line] = linesOf('broken-1');
    expect(error).toMatchObject({
      level: 'error',
      context: 'Errors',
      msg: 'Unexpected error on GET /v1/pets',
      err: { stack: expect.stringMatching(/\n\s+at /) },
    });
    expect(line).toMatchObject({ level: 'error', method: 'GET', route: '/v1/pets', status: 500 });
    expect(linesOf('broken-1')).toHaveLength(2);
    await app.get(DataSource).initialize();
  });

  it('LOG_LEVEL=warn keeps only requests that went wrong', async () => {
    await boot({ LOG_LEVEL: 'warn' });
    const ok = await request(http).get('/v1/pets').set(AUTH);
    const unauthorized = await request(http).get('/v1/pets');

    expect(linesOf(ok.headers['x-request-id'])).toEqual([]);
    expect(linesOf(unauthorized.headers['x-request-id'])).toEqual([
      expect.objectContaining({ level: 'warn', status: 401 }),
    ]);
    expect(logs.lines().every((line) => line.level === 'warn' || line.level === 'error')).toBe(true);
  });

  it('LOG_LEVEL=silent writes nothing', async () => {
    await boot({ LOG_LEVEL: 'silent' });
    await request(http).get('/v1/pets');
    await request(http).get('/v1/nowhere');
    expect(logs.text()).toBe('');
  });

  describe('client address', () => {
    const forwarded = { 'X-Forwarded-For': '203.0.113.9' };

    it('is the peer address by default: X-Forwarded-For is not trusted', async () => {
      await boot();
      const res = await request(http).get('/health/live').set(forwarded);
      expect(linesOf(res.headers['x-request-id'])[0].ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
    });

    it('is the forwarded address behind a trusted proxy (TRUST_PROXY)', async () => {
      await boot({ TRUST_PROXY: 'loopback' });
      const res = await request(http).get('/health/live').set(forwarded);
      expect(linesOf(res.headers['x-request-id'])[0].ip).toBe('203.0.113.9');
    });
  });

  describe('what the HTTP parser refuses, and keys in URLs (real sockets)', () => {
    let port: number;
    const stored = 'pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

    beforeEach(async () => {
      await boot({ API_KEYS: `${TEST_KEY},configured-key-0123456789abcdef` });
      port = await listenWithTimeouts(app, 1000);
    });

    it('logs one warn line for each request the parser refuses: address, reason, status and the id it answered with', async () => {
      const smuggled = await exchange(
        port,
        'POST /v1/pets HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      );
      const tooLarge = await exchange(
        port,
        `GET /v1/pets HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
      );
      for (const [{ responses }, status, reason] of [
        [smuggled, 400, 'HPE_INVALID_TRANSFER_ENCODING'],
        [tooLarge, 431, 'HPE_HEADER_OVERFLOW'],
      ] as const) {
        const id = responses[0].headers['x-request-id'][0];
        expect(responses[0].status).toBe(status);
        expect(linesOf(id)).toEqual([
          expect.objectContaining({
            level: 'warn',
            ip: expect.stringMatching(/127\.0\.0\.1$/),
            status,
            reason,
          }),
        ]);
      }
    });

    it('logs a body that came too slowly with the 408 it was answered and the address it came from', async () => {
      const { responses } = await exchange(
        port,
        [
          'POST /v1/pets HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 30\r\n\r\n{"na',
          'me"',
        ],
        { pauseMs: 2500, timeoutMs: 6000 },
      );
      expect(responses[0].status).toBe(408);
      const [line] = linesOf(responses[0].headers['x-request-id'][0]);
      expect(line).toMatchObject({ status: 408, ip: expect.stringMatching(/127\.0\.0\.1$/) });
    });

    it.each([
      ['in the path', `/v1/pets/${stored}`],
      ['under bearer', `/v1/pets?bearer=${stored}`],
      ['under a short name', `/v1/pets?k=${stored}`],
      ['after a semicolon', `/v1/pets?x=1;api_key=${stored}`],
      ['percent-encoded', `/v1/pets/%70${stored.slice(1)}`],
      ['a configured key', '/v1/pets?q=configured-key-0123456789abcdef'],
      ['the test key in the path', `/v1/pets/${TEST_KEY}`],
    ])('never logs a key %s', async (_label, path) => {
      const res = await request(http).get(path).set(AUTH);
      const [line] = linesOf(res.headers['x-request-id']);
      expect(line).toBeDefined();
      expect(logs.text()).not.toContain(stored.slice(4));
      expect(logs.text()).not.toContain('configured-key-0123456789abcdef');
      expect(logs.text()).not.toContain(TEST_KEY);
      expect(String(line.url)).toContain('[Redacted]');
    });
  });
});
