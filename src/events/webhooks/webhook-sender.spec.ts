import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { send } from './webhook-sender';

const OPEN = { allowHttp: true, allowPrivateNetworks: true };
const STRICT = { allowHttp: true, allowPrivateNetworks: false };
const OPTIONS = { policy: OPEN, timeoutMs: 2000, excerptBytes: 1024 };

/** A server on a loopback address that answers with `handle` and counts connections. */
async function serve(host: string, handle: Parameters<typeof createServer>[1]) {
  const server: Server = createServer(handle);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const body = '{"id":"evt_0000000000000001"}';
const target = (url: string) => ({ url, headers: { 'webhook-id': 'evt_0000000000000001' }, body });

describe('send (over real sockets, on loopback only)', () => {
  it('POSTs the body as JSON with its headers; a 2xx is a success', async () => {
    let seen: { method?: string; headers: Record<string, unknown>; body: string } | undefined;
    const server = await serve('127.0.0.1', (req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        seen = { method: req.method, headers: req.headers, body: text };
        res.writeHead(204).end();
      });
    });
    try {
      const attempt = await send(target(`http://127.0.0.1:${server.port}/in`), OPTIONS);
      expect(attempt).toMatchObject({ ok: true, status: 204, excerpt: '' });
      expect(seen).toMatchObject({ method: 'POST', body });
      expect(seen!.headers).toMatchObject({
        'content-type': 'application/json',
        'webhook-id': 'evt_0000000000000001',
        'user-agent': 'petstore-webhooks/1.0',
      });
    } finally {
      await server.close();
    }
  });

  it('fails on a 500, reads Retry-After of a 429, and follows no redirect', async () => {
    const elsewhere = await serve('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const server = await serve('127.0.0.1', (req, res) => {
      req.resume();
      if (req.url === '/fail') res.writeHead(500).end('broken');
      else if (req.url === '/slow-down') res.writeHead(429, { 'Retry-After': '120' }).end();
      else res.writeHead(302, { Location: `http://127.0.0.1:${elsewhere.port}/` }).end();
    });
    try {
      const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
      expect(await send(target(url('/fail')), OPTIONS)).toMatchObject({
        ok: false,
        status: 500,
        excerpt: 'broken',
      });
      expect(await send(target(url('/slow-down')), OPTIONS)).toMatchObject({
        ok: false,
        status: 429,
        retryAfterMs: 120_000,
      });
      expect(await send(target(url('/moved')), OPTIONS)).toMatchObject({ ok: false, status: 302 });
      expect(elsewhere.connections()).toBe(0);
    } finally {
      await server.close();
      await elsewhere.close();
    }
  });

  it('ends an attempt whose receiver hangs at the timeout, and one that trickles too', async () => {
    const server = await serve('127.0.0.1', (req, res) => {
      req.resume();
      if (req.url === '/trickle') {
        res.writeHead(200);
        const drip = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(drip));
      }
    });
    try {
      for (const path of ['/hang', '/trickle']) {
        const attempt = await send(target(`http://127.0.0.1:${server.port}${path}`), {
          ...OPTIONS,
          timeoutMs: 300,
        });
        expect(attempt).toMatchObject({ ok: false, error: 'no answer within 300 ms' });
        expect(attempt.durationMs).toBeLessThan(1500);
      }
    } finally {
      await server.close();
    }
  });

  it('keeps only the first bytes of a huge answer, and stops reading it', async () => {
    const server = await serve('127.0.0.1', (req, res) => {
      req.resume();
      res.writeHead(200);
      const chunk = 'x'.repeat(64 * 1024);
      const more = () => {
        while (res.write(chunk));
      };
      res.on('drain', more);
      more();
    });
    try {
      const attempt = await send(target(`http://127.0.0.1:${server.port}/`), {
        ...OPTIONS,
        excerptBytes: 100,
      });
      expect(attempt).toMatchObject({ ok: true, status: 200, excerpt: 'x'.repeat(100) });
    } finally {
      await server.close();
    }
  });

  it('keeps one connection for attempts in a row; an answer of exactly the excerpt is read whole', async () => {
    const server = await serve('127.0.0.1', (req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end('y'.repeat(100)));
    });
    try {
      for (let round = 0; round < 3; round++) {
        const attempt = await send(target(`http://127.0.0.1:${server.port}/`), {
          ...OPTIONS,
          excerptBytes: 100,
        });
        expect(attempt).toMatchObject({ ok: true, status: 200, excerpt: 'y'.repeat(100) });
        await new Promise(setImmediate); // the pool takes the connection back after the answer's end
      }
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('reads the final answer after an informational one, with only its own headers', async () => {
    const server = await serve('127.0.0.1', (req, res) => {
      req.resume();
      res.writeEarlyHints({ link: '</style.css>; rel=preload', 'retry-after': '999' }, () =>
        res.writeHead(503).end(),
      );
    });
    try {
      const attempt = await send(target(`http://127.0.0.1:${server.port}/`), OPTIONS);
      expect(attempt).toMatchObject({ ok: false, status: 503 });
      expect(attempt.retryAfterMs).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('says why no connection could be made, without throwing', async () => {
    const server = await serve('127.0.0.1', () => undefined);
    const { port } = server;
    await server.close();
    expect(await send(target(`http://127.0.0.1:${port}/`), OPTIONS)).toMatchObject({
      ok: false,
      error: 'the connection was refused',
    });
    expect(await send(target('not a url'), OPTIONS)).toMatchObject({
      ok: false,
      error: 'the URL is not valid',
    });
  });

  it('refuses loopback and unspecified addresses, by literal (in any IPv6 form) or by name, before any connection', async () => {
    const v4 = await serve('127.0.0.1', (_req, res) => res.writeHead(200).end());
    const v6 = await serve('::1', (_req, res) => res.writeHead(200).end());
    try {
      for (const url of [
        `http://127.0.0.1:${v4.port}/`,
        `http://0.0.0.0:${v4.port}/`,
        `http://localhost:${v4.port}/`,
        `http://[::1]:${v6.port}/`,
        `http://[::ffff:127.0.0.1]:${v4.port}/`,
        `http://[::127.0.0.1]:${v4.port}/`,
        `http://[::ffff:0:127.0.0.1]:${v4.port}/`,
        `http://[64:ff9b::127.0.0.1]:${v4.port}/`,
        `http://[2002:7f00:1::1]:${v4.port}/`,
      ]) {
        const attempt = await send(target(url), { ...OPTIONS, policy: STRICT });
        expect(attempt.ok).toBe(false);
        expect([url, attempt.error]).toEqual([
          url,
          expect.stringMatching(/loopback|unspecified|IPv4-translated|NAT64|6to4/),
        ]);
      }
      expect(v4.connections() + v6.connections()).toBe(0);
    } finally {
      await v4.close();
      await v6.close();
    }
  });
});
