import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DeliveryThread } from './delivery-thread';
import { newSigningSecret } from './signature';

/** A loopback receiver: `hang` leaves requests unanswered; otherwise 204, keeping what came. */
async function receiver() {
  const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  let connections = 0;
  let hang = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      if (!hang) res.writeHead(204).end();
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    connections: () => connections,
    hang: () => (hang = true),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const event = {
  eventId: 'evt_0000000000000007',
  type: 'pet.updated',
  at: Date.UTC(2026, 10, 28, 10, 0, 0),
  data: '{"id":7,"name":"Rex ü 🐕","status":"sold","version":3,"previousStatus":"pending"}',
};

describe('DeliveryThread (a worker thread, real loopback sockets)', () => {
  const threads: DeliveryThread[] = [];
  const thread = (allowPrivateNetworks: boolean) => {
    const made = new DeliveryThread({ allowHttp: true, allowPrivateNetworks }, 500);
    threads.push(made);
    return made;
  };
  afterAll(() => Promise.all(threads.map((made) => made.stop())));

  it('sends the event as published, signed so that the standardwebhooks library verifies it', async () => {
    const target = await receiver();
    try {
      const secret = newSigningSecret();
      const attempt = await thread(true).send({ url: target.url, secrets: [secret], ...event });
      expect(attempt).toMatchObject({ ok: true, status: 204 });
      const [{ headers, body }] = target.seen;
      expect(headers['webhook-id']).toBe(event.eventId);
      expect(new Webhook(secret).verify(body, headers as Record<string, string>)).toEqual({
        id: event.eventId,
        type: 'pet.updated',
        timestamp: '2026-11-28T10:00:00.000Z',
        data: JSON.parse(event.data) as object,
      });
    } finally {
      target.close();
    }
  });

  it('takes the address policy along: without private networks, loopback is never contacted', async () => {
    const target = await receiver();
    try {
      const attempt = await thread(false).send({ url: target.url, secrets: [newSigningSecret()], ...event });
      expect(attempt.ok).toBe(false);
      expect(attempt.error).toMatch(/loopback/);
      expect(target.connections()).toBe(0);
    } finally {
      target.close();
    }
  });

  it('fails the attempts of a thread that stops, and starts another for the next delivery', async () => {
    const target = await receiver();
    try {
      const sender = thread(true);
      target.hang();
      const held = sender.send({ url: target.url, secrets: [newSigningSecret()], ...event });
      while (target.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await sender.stop();
      await expect(held).resolves.toMatchObject({ ok: false, error: 'the delivery thread stopped' });
      const next = await sender.send({ url: target.url, secrets: [newSigningSecret()], ...event });
      expect(next).toMatchObject({ ok: false, error: 'no answer within 500 ms' });
      expect(target.seen).toHaveLength(2);
    } finally {
      target.close();
    }
  });
});
