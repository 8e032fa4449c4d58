import { once } from 'node:events';
import { AddressInfo, Socket } from 'node:net';
import { IncomingMessage, request as httpRequest, ServerResponse } from 'node:http';
import express from 'express';
import pino from 'pino';
import request from 'supertest';
import { REDACT_PATHS } from '../observability/redact';
import { levelOf, requestIdFor, requestIdOf, requestLog } from './request-log';

type Line = Record<string, unknown>;

/** A tiny Express app behind the request log, and the lines the log wrote (parsed). */
function appWithLog(level = 'info') {
  const lines: Line[] = [];
  const logger = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
  const app = express();
  app.use(requestLog(logger));
  app.get('/pets/:petId', (req, res) => {
    res.json({ seen: requestIdOf(req) });
  });
  app.get('/broken', (_req, res) => {
    res.status(503).end();
  });
  app.get('/slow', () => {
    // never answers: the client gives up
  });
  return { app, lines };
}

/** The log line is written on 'close', which may come just after the client read the answer. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
}

describe('levelOf', () => {
  it.each([
    [200, true, 'info'],
    [201, true, 'info'],
    [304, true, 'info'],
    [200, false, 'warn'],
    [404, true, 'warn'],
    [429, true, 'warn'],
    [500, true, 'error'],
    [503, false, 'warn'],
    [503, true, 'warn'],
    [502, true, 'error'],
  ])('status %i, finished %p: %s', (status, finished, level) => {
    expect(levelOf(status, finished)).toBe(level);
  });
});

describe('requestLog', () => {
  it('writes lines that hold nothing the redaction censors, which they skip', async () => {
    const { app, lines } = appWithLog();
    await request(app)
      .get('/pets/7?api_key=secret-value&token=t0k3n')
      .set('Authorization', 'Bearer pet_secret-0123456789abcdef')
      .set('Cookie', 'session=abc');
    await settle();

    expect(lines).toHaveLength(1);
    const censored = new Set(REDACT_PATHS.map((path) => path.replace(/^\*\./, '').split(/[.[]/)[0]));
    for (const [field, value] of Object.entries(lines[0])) {
      expect(censored.has(field)).toBe(false);
      expect(typeof value === 'object' && value !== null).toBe(false); // no nested records
    }
    const text = JSON.stringify(lines[0]);
    for (const secret of ['secret-value', 't0k3n', 'pet_secret', 'session=abc'])
      expect(text).not.toContain(secret);
  });

  it('writes one line per request under its id, the id echoed in X-Request-Id', async () => {
    const { app, lines } = appWithLog();
    const res = await request(app).get('/pets/7?limit=5').set('X-Request-Id', 'trace-1');
    await settle();

    expect(res.headers['x-request-id']).toBe('trace-1');
    expect(res.body).toEqual({ seen: 'trace-1' });
    expect(lines).toEqual([
      expect.objectContaining({
        level: 30,
        reqId: 'trace-1',
        method: 'GET',
        route: '/pets/:petId',
        url: '/pets/7?limit=5',
        status: 200,
        durationMs: expect.any(Number),
        ip: expect.stringMatching(/127\.0\.0\.1$/),
        msg: expect.stringMatching(/^GET \/pets\/7\?limit=5 200 \d+ms$/),
      }),
    ]);
    expect(lines[0]).not.toHaveProperty('aborted');
  });

  it('generates an id when none (or a malformed one) is sent', async () => {
    const { app, lines } = appWithLog();
    const res = await request(app).get('/pets/1').set('X-Request-Id', 'two words');
    await settle();

    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines[0].reqId).toBe(res.headers['x-request-id']);
  });

  it('logs 4xx and 503 as warn, without a route when none matched', async () => {
    const { app, lines } = appWithLog();
    await request(app).get('/nowhere');
    await request(app).get('/broken');
    await settle();

    expect(lines).toEqual([
      expect.objectContaining({ level: 40, url: '/nowhere', status: 404 }),
      expect.objectContaining({ level: 40, route: '/broken', status: 503 }),
    ]);
    expect(lines[0]).not.toHaveProperty('route');
  });

  it('redacts key-like query values in the url and the message', async () => {
    const { app, lines } = appWithLog();
    await request(app).get('/pets/1?api_key=pet_secret123&limit=1');
    await settle();

    expect(lines[0].url).toBe('/pets/1?api_key=[Redacted]&limit=1');
    expect(JSON.stringify(lines)).not.toContain('pet_secret123');
  });

  it('builds no line below the level: at warn a success writes nothing, a 404 still does', async () => {
    const { app, lines } = appWithLog('warn');
    await request(app).get('/pets/1');
    await request(app).get('/nowhere');
    await settle();

    expect(lines).toEqual([expect.objectContaining({ level: 40, status: 404 })]);
  });

  it('logs a request whose client went away before the answer as aborted, at warn', async () => {
    const { app, lines } = appWithLog();
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const client = httpRequest({ port: (server.address() as AddressInfo).port, path: '/slow' });
      client.on('error', () => undefined);
      const arrived = once(server, 'request');
      client.end();
      await arrived; // on a busy machine a fixed pause may end before the request arrives
      client.destroy();
      for (let i = 0; i < 500 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));

      expect(lines).toEqual([
        expect.objectContaining({
          level: 40,
          url: '/slow',
          aborted: true,
          msg: expect.stringMatching(/aborted/),
        }),
      ]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function exchange(header?: string | string[]): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  if (header !== undefined) req.headers['x-request-id'] = header;
  return { req, res: new ServerResponse(req) };
}

/** Kept as the request's id, not replaced by a new one. */
function isWellFormedRequestId(id?: string | string[]): boolean {
  const { req, res } = exchange(id);
  return requestIdFor(req, res) === id;
}

describe('a well-formed request id', () => {
  it.each(['a', 'abc-123', 'req_01HF.2:x', 'A'.repeat(128), '0f8fad5b-d9cb-469f-a165-70867728950e'])(
    'accepts %s',
    (id) => {
      expect(isWellFormedRequestId(id)).toBe(true);
    },
  );

  it.each([
    ['empty', ''],
    ['129 characters', 'A'.repeat(129)],
    ['a space', 'abc 123'],
    ['a line break', 'abc\n{"level":"fatal"}'],
    ['a quote', 'abc"123'],
    ['a slash', 'abc/123'],
    ['non-ASCII', 'idé'],
    ['two ids joined by Node', 'one, two'],
  ])('refuses %s', (_label, id) => {
    expect(isWellFormedRequestId(id)).toBe(false);
  });

  it('refuses anything but a string', () => {
    expect(isWellFormedRequestId(undefined)).toBe(false);
    expect(isWellFormedRequestId(['abc'])).toBe(false);
  });
});

describe('requestIdFor', () => {
  it('keeps a well-formed incoming id and echoes it', () => {
    const { req, res } = exchange('client-id-42');
    expect(requestIdFor(req, res)).toBe('client-id-42');
    expect(res.getHeader('X-Request-Id')).toBe('client-id-42');
  });

  it.each([undefined, '', 'bad id', 'x'.repeat(200)])('generates a UUID instead of %p', (header) => {
    const { req, res } = exchange(header);
    const id = requestIdFor(req, res);
    expect(id).toMatch(UUID);
    expect(res.getHeader('X-Request-Id')).toBe(id);
  });

  it('generates a different id for each request', () => {
    const ids = new Set(Array.from({ length: 50 }, () => requestIdFor(exchange().req, exchange().res)));
    expect(ids.size).toBe(50);
  });
});
