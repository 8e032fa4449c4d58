import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../src/auth/api-keys.service';
import { requestDigest } from '../src/idempotency/idempotent-requests';
import { IdempotencyService } from '../src/idempotency/idempotency.service';
import { __Items__Service } from '../src/__items-kebab__/__items-kebab__.service';
import { AUTH, startApp, TEST_KEY } from './support/app';
import { committedDocument, ContractValidator } from './support/openapi';

/**
 * The __nouns__ module through the whole app, as main.ts builds it (SQLite, or TEST_DATABASE_URL).
 * Every response is checked against the committed openapi.yaml, and the last test asserts that
 * every response the module's operations document was produced.
 */
describe('__Items__ API (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;
  let contract: ContractValidator;

  beforeAll(async () => {
    app = await startApp();
    http = app.getHttpServer();
    contract = await ContractValidator.forPaths('/__items-kebab__');
  });

  afterAll(async () => {
    await app.close();
  });

  const list = (query = '', server: App = http) => request(server).get(`/v1/__items-kebab__${query}`).set(AUTH);
  const create = (body: object, headers: Record<string, string> = {}, server: App = http) =>
    request(server).post('/v1/__items-kebab__').set(AUTH).set(headers).send(body);
  const get = (id: number | string, server: App = http) =>
    request(server).get(`/v1/__items-kebab__/${id}`).set(AUTH);

  /** A documented answer (`operationId status`), in the Error shape with this code. */
  function expectError(res: request.Response, answer: string, code: string): void {
    expect(contract.check(res)).toBe(answer);
    expect(res.body).toMatchObject({ code, status: res.status, message: expect.any(String) });
  }

  it('lists nothing at first', async () => {
    const res = await list();
    expect(contract.check(res)).toBe('list__Items__ 200');
    expect(res.body).toEqual([]);
    expect(res.headers.link).toBeUndefined();
  });

  it('needs an API key: 401 in the Error shape without one', async () => {
    const res = await request(http).get('/v1/__items-kebab__');
    expectError(res, 'list__Items__ 401', 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expectError(await request(http).post('/v1/__items-kebab__').send({}), 'create__Item__ 401', 'unauthorized');
    expectError(await request(http).get('/v1/__items-kebab__/1'), 'get__Item__ 401', 'unauthorized');
  });

  it('creates __a_noun__: 201 with Location, and gets it there', async () => {
    const created = await create({ name: 'First', description: 'The first one' });
    expect(contract.check(created)).toBe('create__Item__ 201');
    expect(created.body).toEqual({ id: expect.any(Number), name: 'First', description: 'The first one' });
    expect(created.headers.location).toBe(`/v1/__items-kebab__/${created.body.id}`);

    const read = await request(http).get(created.headers.location).set(AUTH);
    expect(contract.check(read)).toBe('get__Item__ 200');
    expect(read.body).toEqual(created.body);
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['a wrong type', { name: 7 }, 'name'],
    ['an unknown property', { name: 'First', id: 3 }, 'id'],
  ])('refuses %s: 400 validation_failed naming the field', async (_label, body, field) => {
    const res = await create(body);
    expectError(res, 'create__Item__ 400', 'validation_failed');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('refuses malformed JSON (400), a body that is not JSON (415) and one over the limit (413)', async () => {
    const malformed = request(http).post('/v1/__items-kebab__').set(AUTH).set('Content-Type', 'application/json');
    expectError(await malformed.send('{"name":'), 'create__Item__ 400', 'invalid_json');
    const text = request(http).post('/v1/__items-kebab__').set(AUTH).set('Content-Type', 'text/plain');
    expectError(await text.send('name=First'), 'create__Item__ 415', 'unsupported_media_type');
    expectError(await create({ name: 'x'.repeat(20_000) }), 'create__Item__ 413', 'payload_too_large');
  });

  it('answers what the HTTP layer refuses before an operation runs (its default response)', async () => {
    const textBody = (path: string) =>
      request(http).get(path).set(AUTH).set('Content-Type', 'text/plain').send('x');
    expectError(await textBody('/v1/__items-kebab__'), 'list__Items__ default', 'unsupported_media_type');
    expectError(await textBody('/v1/__items-kebab__/1'), 'get__Item__ default', 'unsupported_media_type');
    const huge = await create({ name: 'Padded' }, { 'X-Padding': 'x'.repeat(20_000) });
    expectError(huge, 'create__Item__ default', 'headers_too_large');
  });

  it('answers 400 for an id that is not a number and 404 for one no __noun__ has', async () => {
    expectError(await get('abc'), 'get__Item__ 400', 'validation_failed');
    expectError(await get(0), 'get__Item__ 404', 'not_found');
    expectError(await get(999_999_999), 'get__Item__ 404', 'not_found');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await request(http).delete('/v1/__items-kebab__').set(AUTH);
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('pages with limit and a next link until the last page', async () => {
    for (const name of ['b', 'c', 'd']) expect((await create({ name })).status).toBe(201);
    const seen: string[] = [];
    let next: string | undefined = '/v1/__items-kebab__?limit=2';
    while (next) {
      const page: request.Response = await request(http).get(next).set(AUTH);
      expect(contract.check(page)).toBe('list__Items__ 200');
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.map((__item__: { name: string }) => __item__.name));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link ?? '')?.[1];
    }
    expect(seen).toEqual(['First', 'b', 'c', 'd']);
    expectError(await list('?limit=0'), 'list__Items__ 400', 'validation_failed');
  });

  it('replays a create retried with the same Idempotency-Key, 422 with another body, 409 in flight', async () => {
    const key = { 'Idempotency-Key': '__items-kebab__-retry-1' };
    const first = await create({ name: 'Once' }, key);
    const retry = await create({ name: 'Once' }, key);
    expect(contract.check(retry)).toBe('create__Item__ 201');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expectError(await create({ name: 'Other' }, key), 'create__Item__ 422', 'idempotency_key_reused');

    // A request still in flight holds its key: reserve one as such a request would.
    const body = { name: 'In flight' };
    await app.get(IdempotencyService).claim(hashApiKey(TEST_KEY), '__items-kebab__-retry-2', requestDigest(body));
    const busy = await create(body, { 'Idempotency-Key': '__items-kebab__-retry-2' });
    expectError(busy, 'create__Item__ 409', 'idempotency_conflict');
  });

  it('is described in /docs-json, tagged, exactly as in the committed openapi.yaml', async () => {
    const served = (await request(http).get('/docs-json')).body;
    expect(Object.keys(served.paths['/__items-kebab__']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(served.paths['/__items-kebab__/{__item__Id}'])).toEqual(['get']);
    expect(served.tags).toContainEqual({ name: '__Items__', description: expect.any(String) });

    // A stale openapi.yaml (a column added, the document not exported): run `npm run openapi:export`.
    const committed = await committedDocument();
    for (const path of ['/__items-kebab__', '/__items-kebab__/{__item__Id}']) {
      expect(committed.paths[path]).toEqual(served.paths[path]);
    }
    for (const schema of ['__Item__', 'New__Item__']) {
      expect(committed.components?.schemas?.[schema]).toEqual(served.components.schemas[schema]);
    }
  });

  describe('429 rate_limited', () => {
    let limited: NestExpressApplication;

    beforeAll(async () => {
      limited = await startApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '1' });
      await list('', limited.getHttpServer()); // uses the whole budget
    });

    afterAll(async () => {
      await limited.close();
    });

    it('answers every operation 429 with Retry-After once the budget is spent', async () => {
      const server = limited.getHttpServer();
      expectError(await list('', server), 'list__Items__ 429', 'rate_limited');
      expectError(await create({ name: 'First' }, {}, server), 'create__Item__ 429', 'rate_limited');
      expectError(await get(1, server), 'get__Item__ 429', 'rate_limited');
    });
  });

  describe('500 internal_error when the database fails', () => {
    let broken: NestExpressApplication;
    let typeormLog: jest.SpyInstance;

    beforeAll(async () => {
      // TypeORM logs each failed query to the console; that is expected here.
      typeormLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      broken = await startApp();
      await broken.get(DataSource).query('DROP TABLE __items_table__');
    });

    afterAll(async () => {
      await broken.close();
      typeormLog.mockRestore();
    });

    it('answers every operation 500 without internals', async () => {
      const server = broken.getHttpServer();
      const expected = { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 };
      for (const [answer, res] of [
        ['list__Items__ 500', await list('', server)],
        ['create__Item__ 500', await create({ name: 'First' }, {}, server)],
        ['get__Item__ 500', await get(1, server)],
      ] as const) {
        expect(contract.check(res)).toBe(answer);
        expect(res.body).toEqual(expected);
      }
    });
  });

  describe('503 service_unavailable when the database is unavailable', () => {
    // The error node-postgres gives while the server is down (test/database-outage.e2e-spec.ts
    // proves real outages get here); this checks the module's answer.
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

    afterEach(() => jest.restoreAllMocks());

    it.each([
      ['list__Items__ 503', 'list', () => list()],
      ['create__Item__ 503', 'create', () => create({ name: 'First' })],
      ['get__Item__ 503', 'get', () => get(987_654)],
    ] as const)('%s with Retry-After', async (answer, method, send) => {
      jest.spyOn(app.get(__Items__Service), method).mockRejectedValueOnce(refused());
      const res = await send();
      expectError(res, answer, 'service_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
    });
  });

  it('has produced every response its operations document', () => {
    expect(contract.unchecked()).toEqual([]);
  });
});
