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
// @if references
import { sampleBody } from './support/samples';
// @end

/**
 * The __nouns__ module through the whole app, as main.ts builds it (SQLite, or TEST_DATABASE_URL).
 * Every response is checked against the committed openapi.yaml, and the last test asserts that
 * every response the module's operations document was produced.
 */
describe('__Items__ API (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;
  let contract: ContractValidator;
  /** The references every body below has, to records that exist in `app`. */
  let refs: Record<string, number> = {};

  /** Records of the referenced modules, made through their own API in `server`'s database. */
  // @if references
  async function makeRefs(server: App): Promise<Record<string, number>> {
    const made: Record<string, number> = {};
    // @each reference
    const __ref__ = await request(server).post('/v1/__ref_folder__').set(AUTH).send(await sampleBody('__NewRef__'));
    expect(__ref__.status).toBe(201);
    made.__ref__Id = __ref__.body.id;
    // @end
    return made;
  }
  // @end
  // @if !references
  const makeRefs = (_server: App): Promise<Record<string, number>> => Promise.resolve({});
  // @end

  beforeAll(async () => {
    app = await startApp();
    http = app.getHttpServer();
    contract = await ContractValidator.forPaths('/__items-kebab__');
    refs = await makeRefs(http);
  });

  afterAll(async () => {
    await app.close();
  });

  const list = (query = '', server: App = http) => request(server).get(`/v1/__items-kebab__${query}`).set(AUTH);
  const create = (body: object, headers: Record<string, string> = {}, server: App = http) =>
    request(server)
      .post('/v1/__items-kebab__')
      .set(AUTH)
      .set(headers)
      .send({ ...refs, ...body });
  const get = (id: number | string, server: App = http) =>
    request(server).get(`/v1/__items-kebab__/${id}`).set(AUTH);
  // @if update
  /** A merge patch (`body`, or raw JSON text) with these headers (If-Match). */
  const patch = (id: number | string, body: object | string, headers: Record<string, string> = {}, server: App = http) =>
    request(server)
      .patch(`/v1/__items-kebab__/${id}`)
      .set(AUTH)
      .set('Content-Type', 'application/merge-patch+json')
      .set(headers)
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  // @end
  // @if delete
  const remove = (id: number | string, headers: Record<string, string> = {}, server: App = http) =>
    request(server).delete(`/v1/__items-kebab__/${id}`).set(AUTH).set(headers);
  // @end

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
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'First',
      description: 'The first one',
      status: 'active',
      ...refs,
    });
    expect(created.headers.location).toBe(`/v1/__items-kebab__/${created.body.id}`);

    const read = await request(http).get(created.headers.location).set(AUTH);
    expect(contract.check(read)).toBe('get__Item__ 200');
    expect(read.body).toEqual(created.body);
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['a wrong type', { name: 7 }, 'name'],
    ['an unknown property', { name: 'First', id: 3 }, 'id'],
    ['a status that is not one', { name: 'First', status: 'lost' }, 'status'],
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

  // @each reference
  it('refuses an unknown __ref__Id: 422 __ref_code__ naming the field, and stores nothing', async () => {
    const before = (await list('?limit=100')).body.length;
    const res = await create({ name: 'Lost', __ref__Id: 987_654 });
    expectError(res, 'create__Item__ 422', '__ref_code__');
    expect(res.body.details).toEqual([expect.objectContaining({ field: '__ref__Id' })]);
    expect((await list('?limit=100')).body).toHaveLength(before);
  });

  // @end
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
    const body = { ...refs, name: 'In flight' };
    await app.get(IdempotencyService).claim(hashApiKey(TEST_KEY), '__items-kebab__-retry-2', requestDigest(body));
    const busy = await create(body, { 'Idempotency-Key': '__items-kebab__-retry-2' });
    expectError(busy, 'create__Item__ 409', 'idempotency_conflict');
  });

  // @if mutable
  describe('changes with ETag and If-Match', () => {
    // @if update
    it('updates with a merge patch: 428 without If-Match, 412 with a stale one, 200 and a new ETag with the current one', async () => {
      const created = await create({ name: 'Draft', description: 'To change' });
      expect(created.headers.etag).toBe('"1"');
      const path = created.headers.location;
      const read = await request(http).get(path).set(AUTH);
      expect(read.headers.etag).toBe('"1"');

      expectError(await patch(created.body.id, { name: 'Final' }), 'update__Item__ 428', 'precondition_required');
      expectError(await patch(created.body.id, { name: 'Final' }, { 'If-Match': '"7"' }), 'update__Item__ 412', 'precondition_failed');

      const updated = await patch(created.body.id, { name: 'Final', description: null }, { 'If-Match': '"1"' });
      expect(contract.check(updated)).toBe('update__Item__ 200');
      expect(updated.headers.etag).toBe('"2"');
      expect(updated.body).toEqual({ ...created.body, name: 'Final', description: undefined });
      const after = await request(http).get(path).set(AUTH);
      expect(after.body).toEqual(updated.body);
      expect(after.headers.etag).toBe('"2"');

      // The first version is gone: its ETag no longer matches, `*` does.
      expectError(await patch(created.body.id, { name: 'Lost' }, { 'If-Match': '"1"' }), 'update__Item__ 412', 'precondition_failed');
      expect((await patch(created.body.id, { status: 'archived' }, { 'If-Match': '*' })).body.status).toBe('archived');
    });

    it('refuses a patch that breaks a rule (400), is not a merge patch (415) or too large (413), and an unknown id (404)', async () => {
      const { body } = await create({ name: 'Rules' });
      const ifMatch = { 'If-Match': '*' };
      for (const [bad, field] of [[{ name: null }, 'name'], [{ id: 9 }, 'id'], [{ status: 'lost' }, 'status']] as const) {
        const res = await patch(body.id, bad, ifMatch);
        expectError(res, 'update__Item__ 400', 'validation_failed');
        expect(res.body.details).toEqual([expect.objectContaining({ field })]);
      }
      expectError(await patch(body.id, '[1, 2]', ifMatch), 'update__Item__ 400', 'validation_failed');
      const asJson = request(http).patch(`/v1/__items-kebab__/${body.id}`).set(AUTH).set(ifMatch);
      expectError(await asJson.send({ name: 'Plain' }), 'update__Item__ 415', 'unsupported_media_type');
      expectError(await patch(body.id, { name: 'x'.repeat(20_000) }, ifMatch), 'update__Item__ 413', 'payload_too_large');
      expectError(await patch(987_654, { name: 'None' }, ifMatch), 'update__Item__ 404', 'not_found');
      expectError(await patch('abc', { name: 'None' }, ifMatch), 'update__Item__ 400', 'validation_failed');
      const anonymous = request(http).patch(`/v1/__items-kebab__/${body.id}`).set('Content-Type', 'application/merge-patch+json');
      expectError(await anonymous.send('{}'), 'update__Item__ 401', 'unauthorized');
      const huge = await patch(body.id, {}, { ...ifMatch, 'X-Padding': 'x'.repeat(20_000) });
      expectError(huge, 'update__Item__ default', 'headers_too_large');
      expect((await get(body.id)).body).toEqual(body);
    });
    // @each reference

    it('refuses a patch to an unknown __ref__Id: 422 __ref_code__', async () => {
      const { body } = await create({ name: 'Moving' });
      const res = await patch(body.id, { __ref__Id: 987_654 }, { 'If-Match': '*' });
      expectError(res, 'update__Item__ 422', '__ref_code__');
      expect((await get(body.id)).body).toEqual(body);
    });
    // @end
    // @end
    // @if delete

    it('deletes: 412 with a stale If-Match, then 204, then 404 for it', async () => {
      const { body } = await create({ name: 'Doomed' });
      expectError(await remove(body.id, { 'If-Match': '"9"' }), 'delete__Item__ 412', 'precondition_failed');

      const deleted = await remove(body.id, { 'If-Match': '"1"' });
      expect(contract.check(deleted)).toBe('delete__Item__ 204');
      expect(deleted.text).toBe('');
      expectError(await get(body.id), 'get__Item__ 404', 'not_found');
      expectError(await remove(body.id), 'delete__Item__ 404', 'not_found');
      expectError(await remove('abc'), 'delete__Item__ 400', 'validation_failed');
      expectError(await request(http).delete(`/v1/__items-kebab__/${body.id}`), 'delete__Item__ 401', 'unauthorized');
      const text = request(http).delete(`/v1/__items-kebab__/${body.id}`).set(AUTH).set('Content-Type', 'text/plain');
      expectError(await text.send('x'), 'delete__Item__ default', 'unsupported_media_type');
    });

    it('refuses to delete __a_noun__ that records of another table refer to: 409 still_referenced', async () => {
      const { body } = await create({ name: 'Referred to' });
      const database = app.get(DataSource);
      // A table of another module, as a database foreign key makes it (on SQLite and PostgreSQL).
      await database.query(
        'CREATE TABLE __items_table___referrers (referred_id bigint NOT NULL REFERENCES __items_table__ (id) ON DELETE RESTRICT)',
      );
      try {
        await database.query(`INSERT INTO __items_table___referrers (referred_id) VALUES (${Number(body.id)})`);
        expectError(await remove(body.id), 'delete__Item__ 409', 'still_referenced');
        expect((await get(body.id)).status).toBe(200);
      } finally {
        await database.query('DROP TABLE __items_table___referrers');
      }
      expect((await remove(body.id)).status).toBe(204);
    });
    // @end
  });

  // @end
  it('is described in /docs-json, tagged, exactly as in the committed openapi.yaml', async () => {
    const served = (await request(http).get('/docs-json')).body;
    expect(Object.keys(served.paths['/__items-kebab__']).sort()).toEqual(['get', 'post']);
    expect(Object.keys(served.paths['/__items-kebab__/{__item__Id}'])).toEqual([
      'get',
      // @if update
      'patch',
      // @end
      // @if delete
      'delete',
      // @end
    ]);
    expect(served.tags).toContainEqual({ name: '__items-kebab__', description: expect.any(String) });

    // A stale openapi.yaml (a column added, the document not exported): run `npm run openapi:export`.
    const committed = await committedDocument();
    for (const path of ['/__items-kebab__', '/__items-kebab__/{__item__Id}']) {
      expect(committed.paths[path]).toEqual(served.paths[path]);
    }
    for (const schema of ['__Item__', 'New__Item__', '__Item__Status']) {
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
      // @if update
      expectError(await patch(1, { name: 'New' }, { 'If-Match': '"1"' }, server), 'update__Item__ 429', 'rate_limited');
      // @end
      // @if delete
      expectError(await remove(1, {}, server), 'delete__Item__ 429', 'rate_limited');
      // @end
    });
  });

  describe('500 internal_error when the database fails', () => {
    let broken: NestExpressApplication;
    let typeormLog: jest.SpyInstance;
    let brokenRefs: Record<string, number>;

    beforeAll(async () => {
      // TypeORM logs each failed query to the console; that is expected here.
      typeormLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      broken = await startApp();
      brokenRefs = await makeRefs(broken.getHttpServer());
      const database = broken.get(DataSource);
      // CASCADE: the foreign keys of modules that refer to this one go with it (PostgreSQL).
      const cascade = database.options.type === 'postgres' ? ' CASCADE' : '';
      await database.query(`DROP TABLE __items_table__${cascade}`);
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
        ['create__Item__ 500', await create({ name: 'First', ...brokenRefs }, {}, server)],
        ['get__Item__ 500', await get(1, server)],
        // @if update
        ['update__Item__ 500', await patch(1, { name: 'New' }, { 'If-Match': '"1"' }, server)],
        // @end
        // @if delete
        ['delete__Item__ 500', await remove(1, {}, server)],
        // @end
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
      // @if update
      ['update__Item__ 503', 'update', () => patch(987_654, { name: 'New' }, { 'If-Match': '"1"' })],
      // @end
      // @if delete
      ['delete__Item__ 503', 'delete', () => remove(987_654)],
      // @end
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
