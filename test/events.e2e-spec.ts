import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { AUTH, dropTestSchemas, useApp } from './support/app';
import { ContractValidator } from './support/openapi';
import { DataSource } from 'typeorm';
import { EventEntity } from '../src/events/event.entity';
import { EventsService } from '../src/events/events.service';
import { sampleBody } from './support/samples';
import { startReceiver, until } from './support/webhook-receiver';

interface PublishedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}
const MERGE_PATCH = 'application/merge-patch+json';

describe('Events and webhooks (e2e)', () => {
  const target = useApp({
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms',
  });
  afterAll(dropTestSchemas);
  let contract: ContractValidator;
  beforeAll(async () => {
    contract = await ContractValidator.forPaths('/events', '/webhook-endpoints', '/pets', '/api-keys');
  });
  const checked = async (test: request.Test) => {
    const res = await test;
    contract.check(res);
    return res;
  };
  const api = {
    get: (path: string) => checked(request(target.http).get(`/v1${path}`).set(AUTH)),
    post: (path: string, body: object = {}) =>
      checked(request(target.http).post(`/v1${path}`).set(AUTH).send(body)),
    patch: (path: string, body: object, ifMatch: string) =>
      checked(
        request(target.http)
          .patch(`/v1${path}`)
          .set(AUTH)
          .set('If-Match', ifMatch)
          .set('Content-Type', MERGE_PATCH)
          .send(JSON.stringify(body)),
      ),
    delete: (path: string) => checked(request(target.http).delete(`/v1${path}`).set(AUTH)),
  };
  /** Every event after `after`, page by page through the Link header. */
  const feed = async (query = ''): Promise<PublishedEvent[]> => {
    const events: PublishedEvent[] = [];
    let next: string | undefined = `/events?limit=3${query}`;
    while (next) {
      const res = await api.get(next);
      expect(res.status).toBe(200);
      events.push(...(res.body as PublishedEvent[]));
      next = /<\/v1([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
    }
    return events;
  };
  const last = async () => (await feed()).at(-1)?.id;

  it('publishes each committed change once, with the record as answered, and nothing refused or unchanged', async () => {
    const start = await last();
    const after = start ? `&after=${start}` : '';
    const created = await api.post('/pets', { ...(await sampleBody('NewPet')), status: 'available' });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const changed = await api.patch(`/pets/${id}`, { status: 'pending' }, created.headers.etag);
    expect(changed.status).toBe(200);
    expect((await api.patch(`/pets/${id}`, { name: 'Stale' }, created.headers.etag)).status).toBe(412);
    expect((await api.patch(`/pets/${id}`, { status: 'pending' }, changed.headers.etag)).status).toBe(200);
    const sold = await api.patch(`/pets/${id}`, { status: 'sold', name: 'Sold one' }, changed.headers.etag);
    expect((await api.patch(`/pets/${id}`, { status: 'available' }, sold.headers.etag)).status).toBe(409);

    const events = await feed(after);
    expect(events.map((event) => event.type)).toEqual(['pet.created', 'pet.updated', 'pet.updated']);
    expect(events[0].data).toEqual({ ...created.body, version: 1 });
    expect(events[1].data).toEqual({ ...changed.body, version: 2, previousStatus: 'available' });
    expect(events[2].data).toEqual({ ...sold.body, version: 3, previousStatus: 'pending' });
    expect(events.map((event) => event.id)).toEqual([...events.map((event) => event.id)].sort());
    for (const event of events) expect(Date.parse(event.timestamp)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('says previousStatus null when a record without a status is given one, as the document allows', async () => {
    const start = await last();
    const { status: _status, ...withoutStatus } = await sampleBody('NewPet');
    const created = await api.post('/pets', withoutStatus);
    expect(created.body).not.toHaveProperty('status');
    const changed = await api.patch(
      `/pets/${created.body.id}`,
      { status: 'available' },
      created.headers.etag,
    );

    const events = await feed(start ? `&after=${start}` : '');
    expect(events.map((event) => [event.type, event.data])).toEqual([
      ['pet.created', { ...created.body, version: 1 }],
      ['pet.updated', { ...changed.body, version: 2, previousStatus: null }],
    ]);
  });

  it('writes one event for 20 racing changes of which one wins, and filters the feed by type', async () => {
    const start = await last();
    const created = await api.post('/pets', await sampleBody('NewPet'));
    const races = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        api.patch(`/pets/${created.body.id}`, { name: `Racer ${index}` }, created.headers.etag),
      ),
    );
    expect(races.filter((res) => res.status === 200)).toHaveLength(1);
    expect((await feed(`&after=${start}&type=pet.updated`)).map((event) => event.data.id)).toEqual([
      created.body.id,
    ]);
    expect(await feed(`&after=${start}&type=pet.*`)).toHaveLength(2);
    expect(await feed(`&after=${start}&type=widget.*`)).toHaveLength(0);
  });

  it('needs events:read for the feed and webhooks:manage for endpoints', async () => {
    const { body: reader } = await api.post('/api-keys', { name: 'reader', scopes: ['events:read'] });
    const as = (path: string) =>
      request(target.http).get(`/v1${path}`).set('Authorization', `Bearer ${reader.secret}`);
    expect((await as('/events')).status).toBe(200);
    const refused = await as('/webhook-endpoints');
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toContain('scope="webhooks:manage"');
  });

  it.each(['order.*', 'pet.deleted', 'pets.*', 'widget.created'])(
    'refuses the event type %s, which matches no event of the service, with 400 naming it',
    async (type) => {
      const message = `${type} matches no event of this service`;
      const refusal = {
        code: 'validation_failed',
        status: 400,
        message: `Validation failed: ${message}.`,
        details: [{ field: 'eventTypes', message }],
      };
      const url = 'http://127.0.0.1:9/typo';
      const made = await api.post('/webhook-endpoints', { url, eventTypes: ['pet.created', type] });
      expect([made.status, made.body]).toEqual([400, refusal]);
      const kept = await api.post('/webhook-endpoints', { url, eventTypes: ['pet.*'], enabled: false });
      expect(kept.status).toBe(201);
      const changed = await api.patch(`/webhook-endpoints/${kept.body.id}`, { eventTypes: [type] }, '*');
      expect([changed.status, changed.body]).toEqual([400, refusal]);
    },
  );

  it('sends an endpoint only events the key that made or last changed it can read: 403 naming the scope', async () => {
    const keyWith = async (...scopes: string[]) =>
      `Bearer ${(await api.post('/api-keys', { name: 'hooks', scopes })).body.secret as string}`;
    const as = (authorization: string) => ({
      post: (body: object) =>
        checked(
          request(target.http).post('/v1/webhook-endpoints').set('Authorization', authorization).send(body),
        ),
      patch: (id: number, body: object) =>
        checked(
          request(target.http)
            .patch(`/v1/webhook-endpoints/${id}`)
            .set('Authorization', authorization)
            .set('If-Match', '*')
            .set('Content-Type', MERGE_PATCH)
            .send(JSON.stringify(body)),
        ),
    });
    const blind = as(await keyWith('webhooks:manage'));
    const reader = as(await keyWith('webhooks:manage', 'pets:read'));
    const url = 'http://127.0.0.1:9/hook';
    const refused = {
      code: 'insufficient_scope',
      message: 'The API key cannot have events sent that it may not read: they need the scope pets:read.',
      status: 403,
    };
    const challenge = 'Bearer realm="petstore", error="insufficient_scope", scope="pets:read"';

    for (const res of [
      await blind.post({ url, eventTypes: ['pet.*'], enabled: false }),
      await blind.post({ url, eventTypes: ['pet.updated'], enabled: false }),
      await blind.post({ url, enabled: false }),
    ]) {
      expect([res.status, res.body]).toEqual([403, refused]);
      expect(res.headers['www-authenticate']).toBe(challenge);
    }
    const made = await reader.post({ url, eventTypes: ['pet.*'], enabled: false });
    expect(made.status).toBe(201);
    // Another key may not point it elsewhere, nor keep its events while changing it.
    for (const res of [
      await blind.patch(made.body.id, { url: 'http://127.0.0.1:9/mine' }),
      await blind.patch(made.body.id, { eventTypes: ['*'] }),
    ])
      expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([403, refused, challenge]);
    expect((await api.get(`/webhook-endpoints/${made.body.id}`)).body.url).toBe(url);
    expect((await reader.patch(made.body.id, { url: 'http://127.0.0.1:9/moved' })).status).toBe(200);
  });

  it('delivers each event signed, as Standard Webhooks verifies it, with both secrets while one rotates out', async () => {
    const receiver = await startReceiver();
    try {
      const made = await api.post('/webhook-endpoints', { url: receiver.url, eventTypes: ['pet.created'] });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ url: receiver.url, eventTypes: ['pet.created'], enabled: true });
      expect(made.body.secret).toMatch(/^whsec_/);
      const got = await api.get(`/webhook-endpoints/${made.body.id}`);
      expect(got.body.secret).toBeUndefined();

      const pet = await api.post('/pets', await sampleBody('NewPet'));
      await api.patch(`/pets/${pet.body.id}`, { name: 'Not delivered' }, pet.headers.etag);
      const first = await until(() => receiver.received[0]);
      const verified = new Webhook(made.body.secret).verify(
        first.body,
        first.headers as Record<string, string>,
      );
      expect(verified).toMatchObject({ type: 'pet.created', data: { ...pet.body, version: 1 } });
      expect(first.headers['webhook-id']).toBe((verified as PublishedEvent).id);

      const rotated = await api.post(`/webhook-endpoints/${made.body.id}/rotate-secret`, {
        graceSeconds: 60,
      });
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).not.toBe(made.body.secret);
      await api.post('/pets', await sampleBody('NewPet'));
      const second = await until(() => receiver.received[1]);
      for (const secret of [made.body.secret, rotated.body.secret])
        expect(() =>
          new Webhook(secret).verify(second.body, second.headers as Record<string, string>),
        ).not.toThrow();
      expect(String(second.headers['webhook-signature']).split(' ')).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.received).toHaveLength(2);

      const deliveries = await api.get(`/webhook-endpoints/${made.body.id}/deliveries`);
      expect(deliveries.body).toHaveLength(2);
      expect(deliveries.body[0]).toMatchObject({ status: 'succeeded', attempts: [{ status: 200 }] });
      expect((await api.delete(`/webhook-endpoints/${made.body.id}`)).status).toBe(204);
      expect((await api.get(`/webhook-endpoints/${made.body.id}`)).status).toBe(404);
    } finally {
      await receiver.close();
    }
  });

  it('retries a failed delivery on the schedule, stops after the last try, and re-sends it on request', async () => {
    let failures = 2;
    const receiver = await startReceiver(() => (failures-- > 0 ? 500 : 200));
    try {
      const made = await api.post('/webhook-endpoints', { url: receiver.url, eventTypes: ['pet.*'] });
      await api.post('/pets', await sampleBody('NewPet'));
      await until(() => receiver.received.length === 3);
      const ids = new Set(receiver.received.map((delivery) => delivery.headers['webhook-id']));
      expect(ids.size).toBe(1);
      // The outcome is written after the receiver has answered, in the next batch of outcomes.
      const delivery = await until(async () => {
        const [listed] = (await api.get(`/webhook-endpoints/${made.body.id}/deliveries`)).body;
        return listed.status !== 'pending' && listed;
      });
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((attempt: { status: number }) => attempt.status)).toEqual([500, 500, 200]);

      failures = 100;
      const resent = await api.post(`/webhook-endpoints/${made.body.id}/deliveries/${delivery.id}/resend`);
      expect(resent.status).toBe(202);
      expect(resent.body.status).toBe('pending');
      const again = await api.post(`/webhook-endpoints/${made.body.id}/deliveries/${delivery.id}/resend`);
      expect([202, 409]).toContain(again.status);
      const after = await until(async () => {
        const [latest] = (await api.get(`/webhook-endpoints/${made.body.id}/deliveries`)).body;
        return latest.status === 'failed' && latest;
      });
      // The first try and the schedule's three retries, after the three of the first series.
      expect(after.attempts).toHaveLength(7);
      expect(receiver.received).toHaveLength(7);
      await api.delete(`/webhook-endpoints/${made.body.id}`);
    } finally {
      await receiver.close();
    }
  });

  it('waits as long as a 503 asks with Retry-After, and sends nothing to a disabled endpoint', async () => {
    let first = true;
    const receiver = await startReceiver(() => (first ? ((first = false), 503) : 200));
    const idle = await startReceiver();
    try {
      const made = await api.post('/webhook-endpoints', { url: receiver.url, eventTypes: ['pet.created'] });
      const off = await api.post('/webhook-endpoints', { url: idle.url, enabled: false });
      expect(off.body.enabled).toBe(false);
      // Retry-After: 1 s, where the schedule says 100 ms.
      receiver.answerHeaders = { 'Retry-After': '1' };
      await api.post('/pets', await sampleBody('NewPet'));
      await until(() => receiver.received.length === 2, 5000);
      expect(receiver.received[1].at - receiver.received[0].at).toBeGreaterThanOrEqual(1000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(idle.connections()).toBe(0);
      for (const id of [made.body.id, off.body.id]) await api.delete(`/webhook-endpoints/${id}`);
    } finally {
      await receiver.close();
      await idle.close();
    }
  });

  it('prunes the events past the retention and keeps the rest', async () => {
    const repository = target.app.get(DataSource).getRepository(EventEntity);
    const day = 86_400_000;
    const old = await repository.save({
      type: 'pet.created',
      at: Date.now() - 31 * day,
      data: '{"id":1,"version":1}',
    });
    const recent = await repository.save({
      type: 'pet.created',
      at: Date.now() - 29 * day,
      data: '{"id":2,"version":1}',
    });
    expect(await target.app.get(EventsService).prune()).toBeGreaterThanOrEqual(1);
    expect(await repository.existsBy({ id: old.id })).toBe(false);
    expect(await repository.existsBy({ id: recent.id })).toBe(true);
  });

  it('turns an endpoint off when its receiver answers 410 Gone', async () => {
    const receiver = await startReceiver(() => 410);
    try {
      const made = await api.post('/webhook-endpoints', { url: receiver.url });
      await api.post('/pets', await sampleBody('NewPet'));
      const endpoint = await until(async () => {
        const res = await api.get(`/webhook-endpoints/${made.body.id}`);
        return !res.body.enabled && res.body;
      });
      expect(endpoint.disabledReason).toContain('410');
      expect(receiver.received).toHaveLength(1);
      await api.delete(`/webhook-endpoints/${made.body.id}`);
    } finally {
      await receiver.close();
    }
  });
});

describe('Webhook endpoint addresses (e2e)', () => {
  const target = useApp({ WEBHOOK_ALLOW_HTTP: 'true' });
  afterAll(dropTestSchemas);

  it('refuses loopback and unspecified addresses at registration without contacting them', async () => {
    const receiver = await startReceiver();
    const port = new URL(receiver.url).port;
    try {
      for (const url of [
        receiver.url,
        `http://[::1]:${port}/hook`,
        `http://0.0.0.0:${port}/hook`,
        `http://localhost:${port}/hook`,
      ]) {
        const res = await request(target.http).post('/v1/webhook-endpoints').set(AUTH).send({ url });
        expect(res.status).toBe(400);
        expect(res.body.details[0].field).toBe('url');
      }
      expect(receiver.connections()).toBe(0);
    } finally {
      await receiver.close();
    }
  });
});
