import { existsSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { TRUST_ANY_PROXY } from '../src/app/startup-report';
import { AUTH, startApp, tempDir, TEST_KEY } from './support/app';
import { exitOf, launchService, RunningService, spawnService, stopService } from './support/process';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A create whose body is sent in two halves: the headers and the first half now, the rest
 * when `finish` is called. Until then the request is in flight on the server. Each goes on its
 * own keep-alive connection, so a `Connection: close` in the answer is the server's choice.
 */
function slowCreate(url: string, name: string): { finish: () => void; reply: Promise<Reply> } {
  const body = JSON.stringify({ name, categoryId: 9, status: 'pending' });
  const half = Math.floor(body.length / 2);
  let finish = (): void => undefined;
  const reply = new Promise<Reply>((resolve, reject) => {
    const req = httpRequest(`${url}/v1/pets`, {
      method: 'POST',
      agent: new Agent({ keepAlive: true, maxSockets: 1 }),
      headers: { ...AUTH, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.flushHeaders();
    req.write(body.slice(0, half));
    finish = () => req.end(body.slice(half));
  });
  return { finish, reply };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A GET on a connection of its own (fetch may reuse a pooled one): rejects if none can be made. */
function onNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The JSON log lines a service printed (its banner and other plain lines left out). */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('Graceful shutdown (e2e, real process)', () => {
  let dir: ReturnType<typeof tempDir>;
  let databasePath: string;
  let service: RunningService | undefined;

  beforeEach(() => {
    dir = tempDir();
    databasePath = join(dir.path, 'petstore.sqlite');
  });

  afterEach(async () => {
    if (service) await stopService(service, 'SIGKILL');
    service = undefined;
    dir.cleanup();
  });

  const env = () => ({ DATABASE_PATH: databasePath, API_KEYS: TEST_KEY, NODE_ENV: 'production' });

  it('on SIGTERM stops taking connections, finishes every request in flight, closes the database and exits 0', async () => {
    service = await spawnService(env());
    const inFlight = Array.from({ length: 25 }, (_, i) => slowCreate(service!.url, `In flight ${i}`));
    await sleep(500); // the server has read every request's headers: they are in flight

    const exited = exitOf(service);
    service.child.kill('SIGTERM');
    await sleep(300);

    await expect(onNewConnection(`${service.url}/health/live`)).rejects.toThrow(/ECONNREFUSED/); // no new connections
    expect(service.child.exitCode).toBeNull(); // still draining

    inFlight.forEach((pending) => pending.finish());
    const replies = await Promise.all(inFlight.map((pending) => pending.reply));
    const { code, output } = await exited;
    service = undefined;

    expect(replies.map((reply) => reply.status)).toEqual(Array(25).fill(201));
    expect(replies.every((reply) => reply.headers.connection === 'close')).toBe(true);
    expect(code).toBe(0);
    const messages = jsonLines(output).map((line) => line.msg);
    expect(messages).toContain(
      'SIGTERM received: no new connections; 25 request(s) in flight; idle connections closed within 5000 ms, then at most 10000 ms for the rest',
    );
    expect(messages).toContain('Shut down: connections and database closed');
    // SQLite checkpoints and removes the write-ahead log when its last connection closes.
    expect(existsSync(`${databasePath}-wal`)).toBe(false);

    const restarted = await startApp({ DATABASE_PATH: databasePath });
    const list = await request(restarted.getHttpServer()).get('/v1/pets?limit=100').set(AUTH);
    await restarted.close();
    const created = replies.map((reply) => JSON.parse(reply.body) as { id: number });
    expect(list.body).toEqual(created.sort((a, b) => a.id - b.id));
  });

  it('SIGINT drains the same way: an idle keep-alive connection stays open, readiness answers 503 on it with Connection: close, then it exits 0', async () => {
    service = await spawnService({ ...env(), NODE_ENV: 'development', SHUTDOWN_DRAIN_MS: '4000' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<Reply>((resolve, reject) => {
        const req = httpRequest(`${service!.url}${path}`, { agent }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        });
        req.on('error', reject);
        req.end();
      });
    expect((await get('/health/ready')).status).toBe(200);
    const exited = exitOf(service);
    const started = Date.now();
    service.child.kill('SIGINT');
    await sleep(500);

    // The proxy's pooled connection was not closed under it: a request written onto it is answered.
    const draining = await get('/health/ready');
    expect(draining.status).toBe(503);
    expect(draining.headers.connection).toBe('close');
    expect(JSON.parse(draining.body)).toMatchObject({
      code: 'service_unavailable',
      message: 'Not ready: shutting down.',
    });
    await expect(onNewConnection(`${service.url}/health/live`)).rejects.toThrow(/ECONNREFUSED/); // no new connections
    const { code, output } = await exited;
    service = undefined;
    agent.destroy();

    expect(code).toBe(0);
    // Once its last connection closed it did not wait out the drain period.
    expect(Date.now() - started).toBeLessThan(3500);
    // Not production: the logs are readable lines, not JSON.
    expect(output).toMatch(/INFO.*GET \/health\/ready 200 \d+ms/);
    expect(output).toContain('SIGINT received: no new connections');
  });

  it('an idle connection nobody uses is closed when the drain period ends', async () => {
    service = await spawnService({ ...env(), SHUTDOWN_DRAIN_MS: '1500' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const closed = new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${service!.url}/health/live`, { agent }, (res) => {
        res.resume();
        res.on('end', () => req.socket?.once('close', () => resolve(Date.now())));
      });
      req.on('error', reject);
      req.end();
    });
    await sleep(300);
    const signalled = Date.now();
    const exited = exitOf(service);
    service.child.kill('SIGTERM');
    const closedAt = await closed;
    const { code } = await exited;
    service = undefined;
    agent.destroy();
    expect(code).toBe(0);
    expect(closedAt - signalled).toBeGreaterThanOrEqual(1400);
    expect(closedAt - signalled).toBeLessThan(3000);
  });

  it('cuts off requests still running after SHUTDOWN_TIMEOUT_MS and exits 1', async () => {
    service = await spawnService({ ...env(), SHUTDOWN_TIMEOUT_MS: '300', SHUTDOWN_DRAIN_MS: '0' });
    const stuck = slowCreate(service.url, 'Never finished');
    await sleep(500);
    const started = Date.now();
    const exited = exitOf(service);
    service.child.kill('SIGTERM');

    await expect(stuck.reply).rejects.toThrow(/socket hang up|ECONNRESET/);
    const { code, output } = await exited;
    service = undefined;

    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(jsonLines(output)).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        context: 'Shutdown',
        msg: '1 request(s) still running at the deadline: closing their connections',
      }),
    );
  });
});

describe('Production mode (e2e, real process)', () => {
  it('a port already in use stops start-up with one line and exit code 1', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as AddressInfo;
    try {
      const { code, output } = await exitOf(
        launchService({
          NODE_ENV: 'production',
          DATABASE_PATH: ':memory:',
          API_KEYS: TEST_KEY,
          PORT: `${port}`,
        }),
      );
      expect(code).toBe(1);
      expect(output).toBe(
        `petstore: could not start: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`,
      );
    } finally {
      blocker.close();
    }
  });

  it('logs JSON lines on stdout, one per request with its id, and never a key', async () => {
    const wrongKey = 'wrong-but-plausible-key-0123456789';
    const service = await spawnService({
      NODE_ENV: 'production',
      DATABASE_PATH: ':memory:',
      API_KEYS: TEST_KEY,
      LOG_LEVEL: 'debug',
    });
    try {
      const wrong = await fetch(`${service.url}/v1/pets`, {
        headers: { Authorization: `Bearer ${wrongKey}`, 'X-Request-Id': 'prod-wrong-key' },
      });
      const right = await fetch(`${service.url}/v1/pets?api_key=${TEST_KEY}`, { headers: AUTH });
      expect([wrong.status, right.status]).toEqual([401, 200]);
      await stopService(service);
    } finally {
      await stopService(service, 'SIGKILL');
    }

    const output = service.output();
    expect(output).not.toContain(wrongKey);
    expect(output).not.toContain(TEST_KEY);
    const lines = jsonLines(output);
    expect(lines.length).toBeGreaterThan(2);
    expect(JSON.stringify(lines)).not.toMatch(/bearer|authorization/i);
    expect(lines.filter((line) => line.reqId === 'prod-wrong-key')).toEqual([
      expect.objectContaining({ level: 'warn', method: 'GET', route: '/v1/pets', status: 401 }),
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', status: 200, url: '/v1/pets?api_key=[Redacted]' }),
    );
  });

  it('TRUST_PROXY=true starts with a warning to name the proxy instead', async () => {
    const service = await spawnService({
      NODE_ENV: 'production',
      DATABASE_PATH: ':memory:',
      API_KEYS: TEST_KEY,
      TRUST_PROXY: 'true',
    });
    await stopService(service);
    expect(jsonLines(service.output())).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: TRUST_ANY_PROXY }),
    );
    expect(TRUST_ANY_PROXY).toContain('name the proxy instead');
  });

  it('stdout carries JSON lines only, the start line included, with the same facts as the banner', async () => {
    const service = launchService({ NODE_ENV: 'production', DATABASE_PATH: ':memory:', API_KEYS: TEST_KEY });
    let stdout = '';
    service.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    try {
      for (let waited = 0; !/listening on/.test(stdout) && waited < 30000; waited += 50) await sleep(50);
      const url = /listening on (http:\/\/\S+)\/v1/.exec(stdout)![1];
      await fetch(`${url}/v1/pets`, { headers: AUTH });
      await stopService(service);
    } finally {
      await stopService(service, 'SIGKILL');
    }

    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(1);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed[0]).toEqual(
      expect.objectContaining({
        level: 'info',
        msg: expect.stringMatching(/^Pet Store API listening on http:\/\/127\.0\.0\.1:\d+\/v1$/),
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1$/),
        docs: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/docs$/),
        database: ':memory: (SQLite, WAL, synchronous=FULL)',
        keys: 'environment',
      }),
    );
  });

  it('NODE_ENV=prod (a typo) refuses to start with one clear line', async () => {
    const { code, output } = await exitOf(
      launchService({ NODE_ENV: 'prod', DATABASE_PATH: ':memory:', API_KEYS: TEST_KEY }),
    );
    expect(code).toBe(1);
    expect(output).toBe(
      'petstore: configuration error: NODE_ENV must be one of development, production, test (got "prod")\n',
    );
  });

  it('names every bad variable in one run, one line each', async () => {
    const { code, output } = await exitOf(
      launchService({ NODE_ENV: 'production', PORT: 'eighty', RATE_LIMIT_ENABLED: 'yes', API_KEYS: 'short' }),
    );
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      'petstore: configuration error: PORT must be an integer from 0 to 65535 (got "eighty")',
      'petstore: configuration error: RATE_LIMIT_ENABLED must be true or false (got "yes")',
      'petstore: configuration error: API_KEYS entry 1 is not a valid key: use at least 16 characters of A-Z a-z 0-9 - . _ ~ + /',
    ]);
  });
});
