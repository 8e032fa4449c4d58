import { readFileSync } from 'node:fs';
import { connect, Socket } from 'node:net';
import { TEST_KEY } from './support/app';
import { RunningService, spawnService, stopService } from './support/process';

/**
 * Slow and hostile connections against a real process with the default limits: clients that
 * pipeline and never read, and clients that trickle their head or body (docs/security.md).
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Resolves with the time the server closed the connection, and what it had sent by then. */
function closedBy(socket: Socket): Promise<{ at: number; text: string }> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  return new Promise((resolve) => socket.once('close', () => resolve({ at: Date.now(), text })));
}

describe('Slow and hostile connections (e2e, real process, default limits)', () => {
  let service: RunningService;
  let port: number;

  beforeAll(async () => {
    // The defaults: rate limits on (the test helpers turn them off).
    service = await spawnService({
      DATABASE_PATH: ':memory:',
      API_KEYS: TEST_KEY,
      NODE_ENV: 'production',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    port = Number(new URL(service.url).port);
  });

  afterAll(async () => {
    await stopService(service, 'SIGKILL');
  });

  /** Sends `count` requests on each of `connections` sockets, reading every answer. */
  async function served(request: string, connections: number, count: number): Promise<void> {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        let [answers, tail] = [0, ''];
        socket.on('data', (chunk: Buffer) => {
          // A status line cut in two by the chunks is counted once, in the second.
          const text = tail + chunk.toString('latin1');
          answers += text.split('HTTP/1.1 ').length - 1;
          tail = text.slice(-8);
        });
        for (let sent = 0; sent < count && !socket.destroyed; sent += 100) {
          socket.write(request.repeat(100));
          while (answers < sent + 100 && !socket.destroyed) await sleep(5);
        }
        socket.destroy();
      }),
    );
  }

  it('20 connections pipelining 6,000 requests each and never reading: RSS +50 MB at most, closed within 45 s, others served meanwhile (within 1 s once the flood fills its buffers)', async () => {
    const request = 'GET /v1/pets?limit=100 HTTP/1.1\r\nHost: a\r\n\r\n';
    // The same requests from clients that read first: the heap any busy service grows to is not
    // what the flood holds.
    await served(request, 20, 1000);
    const before = rssMb(service.child.pid!);
    const started = Date.now();
    const flood = request.repeat(6000);
    const readers = Array.from({ length: 20 }, () => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.pause(); // never reads: its receive buffer fills, and then the server's sends stall
      socket.write(flood);
      return socket;
    });

    let peak = before;
    let normalWorst = 0;
    for (let waited = 0; waited < 40_000; waited += 1000) {
      const asked = Date.now();
      const res = await fetch(`${service.url}/v1/pets`, { headers: { Authorization: `Bearer ${TEST_KEY}` } });
      expect(res.status).toBe(200);
      // At first the flood's answers do leave, into the kernel's buffers of its connections
      // (megabytes each on loopback); once those are full, it costs nothing more.
      if (waited >= 10_000) normalWorst = Math.max(normalWorst, Date.now() - asked);
      peak = Math.max(peak, rssMb(service.child.pid!));
      await sleep(1000);
    }

    // The flood's connections: once the service has closed them, reading what it sent ends at once.
    const ends = readers.map((socket) => {
      const ended = new Promise<boolean>((resolve) => {
        socket.once('close', () => resolve(true));
        setTimeout(() => resolve(false), 5000);
      });
      socket.resume();
      return ended;
    });
    expect(await Promise.all(ends)).toEqual(Array(20).fill(true));
    expect(peak - before).toBeLessThanOrEqual(50);
    expect(normalWorst).toBeLessThan(1000);
    console.log(
      JSON.stringify({
        rssBeforeMb: Math.round(before),
        rssPeakMb: Math.round(peak),
        closedWithinMs: Date.now() - started,
        normalClientWorstMs: normalWorst,
      }),
    );
  }, 90_000);

  it('a head trickled a byte a second is cut within 25 s, a body within 45 s: 408 in the Error shape', async () => {
    const started = Date.now();
    const head = connect(port, '127.0.0.1');
    head.on('error', () => undefined);
    const headClosed = closedBy(head);
    head.write('GET /v1/pets HTTP/1.1\r\nHost: a\r\n');
    const body = connect(port, '127.0.0.1');
    body.on('error', () => undefined);
    const bodyClosed = closedBy(body);
    body.write(
      `POST /v1/pets HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${TEST_KEY}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    );
    let trickling = true;
    void (async () => {
      while (trickling) {
        if (!head.destroyed) head.write('X');
        if (!body.destroyed) body.write(' ');
        await sleep(1000);
      }
    })();
    try {
      const cutHead = await headClosed;
      expect(cutHead.at - started).toBeLessThan(25_000);
      expect(cutHead.text).toMatch(/^HTTP\/1\.1 408 /);
      const cutBody = await bodyClosed;
      expect(cutBody.at - started).toBeLessThan(45_000);
      expect(cutBody.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(cutBody.text).toContain('"code":"request_timeout"');
      console.log(
        JSON.stringify({ headCutAfterMs: cutHead.at - started, bodyCutAfterMs: cutBody.at - started }),
      );
    } finally {
      trickling = false;
    }
  }, 60_000);
});
