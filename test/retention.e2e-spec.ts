import { Agent, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AUTH, startApp } from './support/app';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Nothing of a request outlives its answer: no closure, timer, map or connection state keeps a
 * request or response object once it is answered. One that does is promoted to the old
 * generation under load, and the mark-compacts that then clear it cost every request: a
 * connection's state that held its latest request took a third off list and tripled p99.
 */
describe('Per-request memory (e2e)', () => {
  let app: NestExpressApplication;
  let port: number;
  const alive: WeakRef<object>[] = [];

  beforeAll(async () => {
    app = await startApp();
    await app.listen(0, '127.0.0.1');
    const server: Server = app.getHttpServer();
    port = (server.address() as AddressInfo).port;
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      alive.push(new WeakRef(req), new WeakRef(res));
    });
  });

  afterAll(() => app.close());

  function send(agent: Agent, method: string, path: string, body?: object): Promise<number> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { ...AUTH };
      if (body) headers['Content-Type'] = 'application/json';
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(body && JSON.stringify(body));
    });
  }

  it('keeps no request or response once answered, on connections that stay open', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const first = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/pets',
          headers: { ...AUTH, 'Content-Type': 'application/json' },
        },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve((JSON.parse(body) as { id: number }).id));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ name: 'First', categoryId: 1 }));
    });
    alive.length = 0;
    const statuses: number[] = [];
    for (let round = 0; round < 10; round++) {
      statuses.push(
        ...(await Promise.all([
          send(agent, 'POST', '/v1/pets', { name: `Rex ${round}`, categoryId: 1, status: 'sold' }),
          send(agent, 'GET', '/v1/pets?limit=5'),
          send(agent, 'GET', `/v1/pets/${first}`),
          send(agent, 'GET', '/v1/pets?status=nope'),
        ])),
      );
    }
    expect(new Set(statuses)).toEqual(new Set([201, 200, 400]));
    expect(Object.values(agent.freeSockets).flat().length).toBeGreaterThan(0);

    // Answers finish in the tick after their last byte; then nothing may hold them.
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
    expect(alive).toHaveLength(80);
    expect(alive.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    agent.destroy();
  });
});
