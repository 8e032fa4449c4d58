import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { useApp } from './support/app';
import { exchange, expectError, httpRequest, listenWithTimeouts, postJson } from './support/raw-http';

const TIMEOUT_MS = 1000;

/**
 * What Node's HTTP layer rejects before any route runs (the table of hostile-input.e2e-spec.ts
 * has the parser errors): timeouts, resets, pipelining, Expect, CONNECT. Raw sockets throughout.
 */
describe('HTTP protocol errors (e2e, raw sockets)', () => {
  const api = useApp();
  let port: number;

  beforeAll(async () => {
    port = await listenWithTimeouts(api.app, TIMEOUT_MS);
  });

  async function expectServiceAnswers(): Promise<void> {
    const { responses } = await exchange(port, httpRequest({ path: '/v1/pets?limit=1' }));
    expect(responses.map((response) => response.status)).toEqual([200]);
  }

  it('headers that never end are answered 408 request_timeout in the Error shape, and closed', async () => {
    const started = Date.now();
    const { responses, closed } = await exchange(port, 'GET /v1/pets HTTP/1.1\r\nHost: a\r\nX-Slow: 1\r\n', {
      timeoutMs: 10_000,
    });
    expect(responses).toHaveLength(1);
    expectError(responses[0], 408, 'request_timeout');
    expect(responses[0].headers.connection).toEqual(['close']);
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.9);
    await expectServiceAnswers();
  });

  it('a body that stops short of its Content-Length is answered 408 request_timeout', async () => {
    const request = postJson('{"name":"Rex","categoryId":1}', { 'Content-Length': '100' });
    const { responses, closed } = await exchange(port, request, { timeoutMs: 10_000 });
    expect(responses).toHaveLength(1);
    expectError(responses[0], 408, 'request_timeout');
    expect(closed).toBe(true);
    await expectServiceAnswers();
  });

  it('a request sent slowly but within the timeout is served', async () => {
    const request = postJson('{"name":"Slow","categoryId":1}').toString('latin1');
    const parts = [request.slice(0, 20), request.slice(20, 60), request.slice(60)];
    const { responses } = await exchange(port, parts, { pauseMs: TIMEOUT_MS / 5 });
    expect(responses.map((response) => response.status)).toEqual([201]);
  });

  it('a client that resets the connection mid-request leaves the service answering', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /v1/pets HTTP/1.1\r\nHost: a\r\nContent-Length: 50\r\n\r\n{"na');
        setTimeout(() => {
          socket.resetAndDestroy();
          resolve();
        }, 50);
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expectServiceAnswers();
  });

  it('a client that pipelines 100 requests at once and reads the answers gets all 100, in order', async () => {
    const pipelined = Array.from({ length: 100 }, (_, i) =>
      httpRequest({
        path: `/v1/pets?limit=${(i % 100) + 1}`,
        headers: { Connection: i === 99 ? 'close' : 'keep-alive' },
      }),
    );
    const { responses } = await exchange(port, Buffer.concat(pipelined), { timeoutMs: 10_000 });
    expect(responses.map((response) => response.status)).toEqual(Array(100).fill(200));
  });

  it('garbage pipelined behind a valid request gets one whole Error response, never a mixed stream', async () => {
    const valid = httpRequest({ path: '/v1/pets?limit=1', headers: { Connection: 'keep-alive' } });
    const { responses, closed } = await exchange(
      port,
      Buffer.concat([valid, Buffer.from('NOT HTTP\r\n\r\n')]),
    );
    expect(closed).toBe(true);
    // The valid request may or may not be answered first; the garbage always gets the Error body.
    expect(responses.length).toBeGreaterThanOrEqual(1);
    expect(responses.slice(0, -1).map((response) => response.status)).toEqual(
      responses.length === 2 ? [200] : [],
    );
    expectError(responses.at(-1), 400, 'bad_request');
    await expectServiceAnswers();
  });

  it('Expect: 100-continue is honoured: 100, then the answer', async () => {
    const request = postJson('{"name":"Patient","categoryId":1}', { Expect: '100-continue' });
    const { responses } = await exchange(port, request);
    expect(responses.map((response) => response.status)).toEqual([100, 201]);
    expect(JSON.parse(responses[1].body)).toEqual({ id: expect.any(Number), name: 'Patient', categoryId: 1 });
  });

  it('another expectation is 417 expectation_failed and nothing is created', async () => {
    const before = await exchange(port, httpRequest({ path: '/v1/pets?limit=100' }));
    const request = postJson('{"name":"Expectant","categoryId":1}', { Expect: 'something-else' });
    const { responses } = await exchange(port, request);
    expect(responses).toHaveLength(1);
    expectError(responses[0], 417, 'expectation_failed');
    const after = await exchange(port, httpRequest({ path: '/v1/pets?limit=100' }));
    expect(after.responses[0].body).toBe(before.responses[0].body);
  });

  it('CONNECT gets 400 bad_request instead of a silent close', async () => {
    const { responses, closed } = await exchange(
      port,
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
    );
    expect(responses).toHaveLength(1);
    expectError(responses[0], 400, 'bad_request');
    expect(JSON.parse(responses[0].body).message).toBe(
      'CONNECT is not supported: this server is not a proxy.',
    );
    expect(closed).toBe(true);
  });

  it('an HTTP/2 connection preface is closed and the service keeps answering', async () => {
    const { closed } = await exchange(port, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    expect(closed).toBe(true);
    await expectServiceAnswers();
  });

  it('keeps a keep-alive connection usable after a 4xx of the application', async () => {
    const invalid = postJson('{"name":""}', { Connection: 'keep-alive' });
    const valid = httpRequest({ path: '/v1/pets?limit=1' });
    const { responses } = await exchange(port, [invalid, valid], { pauseMs: 100 });
    expect(responses.map((response) => response.status)).toEqual([400, 200]);
    expectError(responses[0], 400, 'validation_failed');
  });

  it("builds each request and response with Express's prototypes, so Express does not change them", async () => {
    const express = api.app.getHttpAdapter().getInstance();
    const seen: unknown[] = [];
    const finished: Promise<unknown[]>[] = [];
    const server = api.app.getHttpServer();
    const record = (req: object, res: ServerResponse): void => {
      seen.push(Object.getPrototypeOf(req), Object.getPrototypeOf(res));
      finished.push(
        new Promise((resolve) =>
          res.once('finish', () => resolve([Object.getPrototypeOf(req), Object.getPrototypeOf(res)])),
        ),
      );
    };
    server.prependListener('request', record);
    try {
      await expectServiceAnswers();
    } finally {
      server.off('request', record);
    }
    expect(finished).toHaveLength(1);
    // On arrival, and still the same when the answer has been written.
    const atFinish = await finished[0];
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(express.request);
    expect(seen[1]).toBe(express.response);
    expect(atFinish[0]).toBe(express.request);
    expect(atFinish[1]).toBe(express.response);
  });
});
