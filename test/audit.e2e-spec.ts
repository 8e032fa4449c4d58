import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AuditEventEntity } from '../src/audit/audit-event.entity';
import { AuditService } from '../src/audit/audit.service';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { dropTestSchemas, postgresTestEnv, startApp, useApp } from './support/app';
import { ContractValidator } from './support/openapi';
import { describeOnPostgres } from './support/postgres';
import { sampleBody } from './support/samples';

interface Event {
  id: number;
  keyId?: number;
  keyName?: string;
  operation: string;
  resource: string;
  resourceId: number;
  outcome: number;
  requestId: string;
  clientAddress: string;
}

const MERGE_PATCH = 'application/merge-patch+json';

/** Every audit event the app holds, page after page, as an `audit:read` key lists them. */
async function allEvents(app: NestExpressApplication, query = ''): Promise<Event[]> {
  const { key } = await app.get(ApiKeysService).create('auditor', { scopes: ['audit:read'] });
  const events: Event[] = [];
  let next: string | undefined = `/v1/audit-events?limit=100${query}`;
  while (next) {
    const res: request.Response = await request(app.getHttpServer())
      .get(next)
      .set('Authorization', `Bearer ${key}`)
      .expect(200);
    events.push(...(res.body as Event[]));
    next = /<([^>]+)>; rel="next"/.exec(String(res.headers.link ?? ''))?.[1];
  }
  return events;
}

describe('The audit log (e2e)', () => {
  const target = useApp();
  afterAll(dropTestSchemas);
  let writer: { id: number; key: string };
  const as = (key: string) => `Bearer ${key}`;

  beforeAll(async () => {
    const made = await target.app
      .get(ApiKeysService)
      .create('writer', { scopes: ['pets:read', 'pets:write', 'keys:manage'] });
    writer = { id: made.record.id, key: made.key };
  });

  it('records each change made through the API once, in its transaction, and nothing refused or unchanged', async () => {
    const http = target.http;
    const before = (await allEvents(target.app)).length;
    const created = await request(http)
      .post('/v1/pets')
      .set('Authorization', as(writer.key))
      .send(await sampleBody('NewPet'))
      .expect(201);
    const id = created.body.id as number;
    const patch = (body: object, ifMatch: string) =>
      request(http)
        .patch(`/v1/pets/${id}`)
        .set('Authorization', as(writer.key))
        .set('If-Match', ifMatch)
        .set('Content-Type', MERGE_PATCH)
        .send(JSON.stringify(body));
    const changed = await patch({ status: 'pending' }, created.headers.etag).expect(200);
    // Refused or unchanged: none of these is a change.
    await patch({ name: 'Stale' }, created.headers.etag).expect(412);
    await patch({ status: 'available', name: 'Same' }, '"99"').expect(412);
    await patch({}, changed.headers.etag).expect(200);
    await patch({ name: '' }, changed.headers.etag).expect(400);
    await request(http)
      .post('/v1/pets')
      .send(await sampleBody('NewPet'))
      .expect(401);
    const reader = (await target.app.get(ApiKeysService).create('reader', { scopes: ['pets:read'] })).key;
    await request(http)
      .post('/v1/pets')
      .set('Authorization', as(reader))
      .send(await sampleBody('NewPet'))
      .expect(403);

    const events = (await allEvents(target.app)).slice(before);
    expect(
      events.map(({ operation, resource, resourceId, outcome, keyId, keyName }) => ({
        operation,
        resource,
        resourceId,
        outcome,
        keyId,
        keyName,
      })),
    ).toEqual([
      {
        operation: 'createPet',
        resource: 'pets',
        resourceId: id,
        outcome: 201,
        keyId: writer.id,
        keyName: 'writer',
      },
      {
        operation: 'updatePet',
        resource: 'pets',
        resourceId: id,
        outcome: 200,
        keyId: writer.id,
        keyName: 'writer',
      },
    ]);
    expect(events.map((event) => event.requestId)).toEqual([
      created.headers['x-request-id'],
      changed.headers['x-request-id'],
    ]);
    expect(events[0].clientAddress).toMatch(/127\.0\.0\.1|::1/);
  });

  it('records the changes of keys, and never a secret', async () => {
    const http = target.http;
    const before = (await allEvents(target.app)).length;
    const made = await request(http)
      .post('/v1/api-keys')
      .set('Authorization', as(writer.key))
      .send({ name: 'audited', scopes: ['pets:read'] })
      .expect(201);
    const id = made.body.id as number;
    const rotated = await request(http)
      .post(`/v1/api-keys/${id}/rotate`)
      .set('Authorization', as(writer.key))
      .send({})
      .expect(200);
    await request(http)
      .patch(`/v1/api-keys/${id}`)
      .set('Authorization', as(writer.key))
      .set('Content-Type', MERGE_PATCH)
      .send('{"name":"renamed"}')
      .expect(200);
    await request(http).delete(`/v1/api-keys/${id}`).set('Authorization', as(writer.key)).expect(204);
    await request(http).delete(`/v1/api-keys/${id}`).set('Authorization', as(writer.key)).expect(204);

    const events = (await allEvents(target.app, '&resource=api-keys')).filter(
      (event) => event.resourceId === id,
    );
    expect(events.map(({ operation, outcome }) => [operation, outcome])).toEqual([
      ['createApiKey', 201],
      ['rotateApiKey', 200],
      ['updateApiKey', 200],
      ['revokeApiKey', 204],
    ]);
    const all = JSON.stringify(await allEvents(target.app));
    for (const secret of [made.body.secret as string, rotated.body.secret as string, writer.key])
      expect(all).not.toContain(secret);
    expect((await allEvents(target.app)).length).toBeGreaterThanOrEqual(before + 4);
  });

  it('lists with audit:read only, by key, resource and time, in pages that match the document', async () => {
    const contract = await ContractValidator.forPaths('/audit-events');
    const http = target.http;
    const refused = await request(http).get('/v1/audit-events').set('Authorization', as(writer.key));
    expect(refused.status).toBe(403);
    const { key } = await target.app.get(ApiKeysService).create('auditor', { scopes: ['audit:read'] });
    const list = (query: string) =>
      request(http).get(`/v1/audit-events${query}`).set('Authorization', as(key));

    const byKey = await list(`?keyId=${writer.id}&limit=1`);
    contract.check(byKey);
    expect(byKey.body).toHaveLength(1);
    expect((byKey.body as Event[])[0].keyId).toBe(writer.id);
    const next = /<\/v1([^>]+)>; rel="next"/.exec(byKey.headers.link)![1];
    const second = await list(next.replace('/audit-events', ''));
    contract.check(second);
    expect((second.body as Event[]).every((event) => event.keyId === writer.id)).toBe(true);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await list(`?since=${future}`)).body).toEqual([]);
    expect(((await list(`?until=${future}&resource=pets`)).body as Event[]).length).toBeGreaterThan(0);
    for (const query of ['?keyId=abc', '?since=yesterday', '?resource=Pets!', '?cursor=forged.cursor'])
      contract.check(await list(query).expect(400));
  });

  it.each(['since', 'until'])('refuses a %s that is not RFC 3339 with 400 naming it', async (field) => {
    const contract = await ContractValidator.forPaths('/audit-events');
    const { key } = await target.app.get(ApiKeysService).create('auditor', { scopes: ['audit:read'] });
    const rule = `${field} must be an RFC 3339 date-time with an offset, such as 2030-01-01T00:00:00Z`;
    for (const value of [
      '2030-W01-1',
      '20300101T000000Z',
      '2030-01-01T00Z',
      '2030-01-01T00:00:00,5Z',
      '2030',
      '2030-01-01',
      '2030-01-01T00:00:00',
      '2030-02-30T00:00:00Z',
      '2030-01-01T24:00:00Z',
    ]) {
      const res = await request(target.http)
        .get(`/v1/audit-events?${field}=${encodeURIComponent(value)}`)
        .set('Authorization', as(key));
      contract.check(res);
      expect([value, res.status, res.body]).toEqual([
        value,
        400,
        {
          code: 'validation_failed',
          status: 400,
          message: `Validation failed: ${rule}.`,
          details: [{ field, message: rule }],
        },
      ]);
    }
    const offset = await request(target.http)
      .get(`/v1/audit-events?${field}=${encodeURIComponent('2000-01-01T01:00:00.5+01:00')}`)
      .set('Authorization', as(key));
    expect(offset.status).toBe(200);
    expect((offset.body as Event[]).length > 0).toBe(field === 'since');
  });

  it('counts exactly one event per successful change under concurrent creates, patches and key changes', async () => {
    const events = await concurrentChanges([target.app]);
    expect(events.recorded).toBe(events.changes);
  });

  it('removes events past the retention, and only those', async () => {
    const repository = target.app.get(DataSource).getRepository(AuditEventEntity);
    const now = Date.now();
    const day = 86_400_000;
    const old = {
      keyId: null,
      keyName: null,
      operation: 'createPet',
      resource: 'pets',
      resourceId: 1,
      outcome: 201,
      requestId: 'r',
      clientAddress: '127.0.0.1',
    };
    await repository.insert([
      { ...old, at: now - 181 * day },
      { ...old, at: now - 179 * day },
    ]);
    const before = await repository.count();

    await expect(target.app.get(AuditService).prune(now)).resolves.toBe(1);
    expect(await repository.count()).toBe(before - 1);
  });
});

/** Creates, patches (50 racing on one version) and key changes through `apps` at once. */
async function concurrentChanges(
  apps: NestExpressApplication[],
): Promise<{ changes: number; recorded: number }> {
  const [first] = apps;
  const { key } = await first
    .get(ApiKeysService)
    .create('load', { scopes: ['pets:read', 'pets:write', 'keys:manage'] });
  const auth = `Bearer ${key}`;
  const before = (await allEvents(first)).length;
  const http = (index: number) => apps[index % apps.length].getHttpServer();
  const pet = await request(http(0))
    .post('/v1/pets')
    .set('Authorization', auth)
    .send(await sampleBody('NewPet'))
    .expect(201);
  const etag = pet.headers.etag;
  const work = [
    ...Array.from({ length: 60 }, async (_, i) =>
      request(http(i))
        .post('/v1/pets')
        .set('Authorization', auth)
        .send(await sampleBody('NewPet')),
    ),
    ...Array.from({ length: 50 }, (_, i) =>
      request(http(i))
        .patch(`/v1/pets/${pet.body.id}`)
        .set('Authorization', auth)
        .set('If-Match', etag)
        .set('Content-Type', MERGE_PATCH)
        .send(JSON.stringify({ name: `Racer ${i}` })),
    ),
    ...Array.from({ length: 10 }, (_, i) =>
      request(http(i))
        .post('/v1/api-keys')
        .set('Authorization', auth)
        .send({ name: `k${i}`, scopes: ['pets:read'] }),
    ),
  ];
  const statuses = (await Promise.all(work)).map((res) => res.status);
  expect(statuses.filter((status) => status === 200)).toHaveLength(1);
  expect(statuses.filter((status) => status >= 500)).toEqual([]);
  const changes = 1 + statuses.filter((status) => status === 200 || status === 201).length;
  return { changes, recorded: (await allEvents(first)).length - before };
}

describeOnPostgres('the audit log at two instances')(
  'The audit log at two instances on PostgreSQL (e2e)',
  () => {
    let apps: NestExpressApplication[] = [];
    afterAll(async () => {
      for (const app of apps) await app.close();
      await dropTestSchemas();
    });

    it('counts exactly one event per successful change made on either instance', async () => {
      const env = postgresTestEnv();
      apps = [await startApp(env), await startApp(env)];
      const events = await concurrentChanges(apps);
      expect(events.recorded).toBe(events.changes);
    });
  },
);
