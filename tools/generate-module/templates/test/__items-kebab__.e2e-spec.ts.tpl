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
  /** The required properties every body below has besides its name: fields, and references to records that exist. */
  let required: Record<string, unknown> = {};
  /** The optional properties, each with a valid value. */
  const OPTIONAL = __OPTIONAL_FIELDS__;
  /** What __a_noun__ created without a status has (null: none). */
  const DEFAULT_STATUS: string | null = __DEFAULT_STATE__;
  const defaultStatus = DEFAULT_STATUS === null ? {} : { status: DEFAULT_STATUS };

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
    required = { ...__REQUIRED_FIELDS__, ...(await makeRefs(http)) };
  });

  afterAll(async () => {
    await app.close();
  });

  const list = (query = '', server: App = http) => request(server).get(`/v1/__items-kebab__${query}`).set(AUTH);
  // @if !references
  const create = (body: object, headers: Record<string, string> = {}, server: App = http) =>
    request(server)
      .post('/v1/__items-kebab__')
      .set(AUTH)
      .set(headers)
      .send({ ...required, ...body });
  // @end
  // @if references
  /**
   * Unless `body` names them, each __noun__ refers to new records of its own (a rule of the module
   * may use one up): `required` holds them, for what the test expects.
   */
  async function create(body: object, headers: Record<string, string> = {}, server: App = http): Promise<request.Response> {
    const named = [
      // @each reference
      '__ref__Id',
      // @end
    ];
    if (!named.every((field) => field in body)) required = { ...required, ...(await makeRefs(http)) };
    return request(server)
      .post('/v1/__items-kebab__')
      .set(AUTH)
      .set(headers)
      .send({ ...required, ...body });
  }
  // @end
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
  // @if !createStatus
  /** The changes that bring a new __noun__ (`__default_state__`) to each status it can reach. */
  const PATHS: Record<string, readonly string[]> = __PATHS__;
  /** A new __noun__ brought to `status` along the lifecycle: the last answer. */
  async function createIn(status: string, body: object = {}): Promise<request.Response> {
    let res = await create({ name: 'Moving', ...body });
    for (const step of PATHS[status]) res = await patch(res.body.id, { status: step }, { 'If-Match': res.headers.etag });
    return res;
  }
  // @end
  // @end
  // @if delete
  const remove = (id: number | string, headers: Record<string, string> = {}, server: App = http) =>
    request(server).delete(`/v1/__items-kebab__/${id}`).set(AUTH).set(headers);
  // @end
  /** Every __noun__ of the list (of one status), page by page. */
  async function walk(query = ''): Promise<{ id: number; name: string }[]> {
    const seen: { id: number; name: string }[] = [];
    let next: string | undefined = `/v1/__items-kebab__?limit=2${query}`;
    while (next) {
      const page: request.Response = await request(http).get(next).set(AUTH);
      expect(contract.check(page)).toBe('list__Items__ 200');
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body);
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link ?? '')?.[1];
    }
    return seen;
  }

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

  it('creates __a_noun__: 201 with Location and ETag, and gets it there', async () => {
    const created = await create({ name: 'First', ...OPTIONAL });
    expect(contract.check(created)).toBe('create__Item__ 201');
    expect(created.body).toEqual({ id: expect.any(Number), name: 'First', ...required, ...OPTIONAL, ...defaultStatus });
    expect(created.headers.location).toBe(`/v1/__items-kebab__/${created.body.id}`);
    expect(created.headers.etag).toBe('"1"');

    const read = await request(http).get(created.headers.location).set(AUTH);
    expect(contract.check(read)).toBe('get__Item__ 200');
    expect(read.body).toEqual(created.body);
    expect(read.headers.etag).toBe('"1"');
    // @if createStatus
    const other = await create({ name: 'Second', status: '__other_state__' });
    expect(other.body).toEqual({ id: expect.any(Number), name: 'Second', ...required, status: '__other_state__' });
    // @end
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['a wrong type', { name: 7 }, 'name'],
    ['an unknown property', { name: 'First', id: 3 }, 'id'],
    ['a status that is not one', { name: 'First', status: 'lost' }, 'status'],
    // @if !createStatus
    ['a status: a new __noun__ is __default_state__', { name: 'First', status: '__default_state__' }, 'status'],
    // @end
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
    const before = (await walk()).length;
    const res = await create({ name: 'Lost', __ref__Id: 987_654 });
    expectError(res, 'create__Item__ 422', '__ref_code__');
    expect(res.body).toMatchObject({ message: '`__ref__Id` names no __ref__.', details: [{ field: '__ref__Id' }] });
    expect(await walk()).toHaveLength(before);
  });

  // @end
  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await request(http).delete('/v1/__items-kebab__').set(AUTH);
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('pages with limit and a next link until the last page, in id order, of all or of one status', async () => {
    const before = await walk();
    const made = [];
    // @if createStatus
    for (const name of ['b', 'c', 'd']) made.push((await create({ name, status: '__other_state__' })).body);
    // @end
    // @if !createStatus
    for (const name of ['b', 'c', 'd']) made.push((await createIn('__other_state__', { name })).body);
    // @end
    const all = await walk();
    expect(all).toEqual([...before, ...made]);
    expect(all.map((__item__) => __item__.id)).toEqual([...all.map((__item__) => __item__.id)].sort((x, y) => x - y));
    expect(await walk('&status=__other_state__')).toEqual(all.filter((__item__) => 'status' in __item__ && __item__.status === '__other_state__'));
    expectError(await list('?limit=0'), 'list__Items__ 400', 'validation_failed');
    expectError(await list('?status=lost'), 'list__Items__ 400', 'validation_failed');
  });

  it('replays a create retried with the same Idempotency-Key, 422 with another body, 409 in flight', async () => {
    const key = { 'Idempotency-Key': '__items-kebab__-retry-1' };
    // @if !references
    const first = await create({ name: 'Once' }, key);
    const retry = await create({ name: 'Once' }, key);
    // @end
    // @if references
    const once = { name: 'Once', ...(await makeRefs(http)) }; // a retry names the same records
    const first = await create(once, key);
    const retry = await create(once, key);
    // @end
    expect(contract.check(retry)).toBe('create__Item__ 201');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expectError(await create({ name: 'Other' }, key), 'create__Item__ 422', 'idempotency_key_reused');

    // A request still in flight holds its key: reserve one as such a request would.
    const body = { ...required, name: 'In flight' };
    await app.get(IdempotencyService).claim(hashApiKey(TEST_KEY), '__items-kebab__-retry-2', requestDigest(body));
    const busy = await create(body, { 'Idempotency-Key': '__items-kebab__-retry-2' });
    expectError(busy, 'create__Item__ 409', 'idempotency_conflict');
  });

  // @if mutable
  describe('changes with ETag and If-Match', () => {
    // @if update
    it('updates with a merge patch: 428 without If-Match, 412 with a stale one, 200 and a new ETag with the current one', async () => {
      const created = await create({ name: 'Draft', ...OPTIONAL });
      expect(created.headers.etag).toBe('"1"');
      const path = created.headers.location;

      expectError(await patch(created.body.id, { name: 'Final' }), 'update__Item__ 428', 'precondition_required');
      expectError(await patch(created.body.id, { name: 'Final' }, { 'If-Match': '"7"' }), 'update__Item__ 412', 'precondition_failed');

      const removals = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
      const updated = await patch(created.body.id, { name: 'Final', ...removals }, { 'If-Match': '"1"' });
      expect(contract.check(updated)).toBe('update__Item__ 200');
      expect(updated.headers.etag).toBe('"2"');
      expect(updated.body).toEqual({ id: created.body.id, name: 'Final', ...required, ...defaultStatus });
      const after = await request(http).get(path).set(AUTH);
      expect(after.body).toEqual(updated.body);
      expect(after.headers.etag).toBe('"2"');

      // The first version is gone: its ETag no longer matches, `*` does.
      expectError(await patch(created.body.id, { name: 'Lost' }, { 'If-Match': '"1"' }), 'update__Item__ 412', 'precondition_failed');
      expect((await patch(created.body.id, { name: 'Again' }, { 'If-Match': '*' })).body.name).toBe('Again');
    });

    it('answers a patch that changes nothing with the __noun__ as it is: same ETag, no new version', async () => {
      const { body } = await create({ name: 'Same', ...OPTIONAL });
      for (const unchanged of [{}, { name: 'Same' }, { name: 'Same', ...OPTIONAL }]) {
        const res = await patch(body.id, unchanged, { 'If-Match': '"1"' });
        expect(contract.check(res)).toBe('update__Item__ 200');
        expect(res.headers.etag).toBe('"1"');
        expect(res.body).toEqual(body);
      }
      expect((await get(body.id)).headers.etag).toBe('"1"');
    });

    it('lets exactly one of 50 changes made with the same If-Match through: the others are 412', async () => {
      const { body } = await create({ name: 'Contested' });
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) => patch(body.id, { name: `Claim ${index}` }, { 'If-Match': '"1"' })),
      );
      expect(answers.filter((res) => res.status === 200)).toHaveLength(1);
      expect(answers.filter((res) => res.status === 412)).toHaveLength(49);
      const winner = answers.find((res) => res.status === 200)!;
      expect((await get(body.id)).body).toEqual(winner.body);
    });

    it('refuses a change past the largest version JSON carries exactly: 409 version_limit_reached', async () => {
      const { body } = await create({ name: 'Old' });
      const last = Number.MAX_SAFE_INTEGER;
      await app.get(DataSource).query(`UPDATE __items_table__ SET version = ${last} WHERE id = ${Number(body.id)}`);
      const res = await patch(body.id, { name: 'New' }, { 'If-Match': `"${last}"` });
      expectError(res, 'update__Item__ 409', 'version_limit_reached');
    });

    it('shows a change at once in get and in every list', async () => {
      const { body } = await create({ name: 'Before' });
      // Read first, so that the reads below would be answered from the cache.
      await get(body.id);
      expect(await walk()).toContainEqual(body);
      const changed = await patch(body.id, { name: 'After' }, { 'If-Match': '"1"' });
      expect((await get(body.id)).body).toEqual(changed.body);
      expect(await walk()).toContainEqual(changed.body);
      expect(await walk()).not.toContainEqual(body);
    });
    // @if moves

    it('moves __a_noun__ between the status lists at once', async () => {
      // @if createStatus
      const { body } = await create({ name: 'Mover', status: '__move_from__' });
      // @end
      // @if !createStatus
      const { body } = await create({ name: 'Mover' });
      // @end
      expect(await walk('&status=__move_from__')).toContainEqual(body);
      await patch(body.id, { status: '__move_to__' }, { 'If-Match': '"1"' });
      expect((await walk('&status=__move_from__')).map((__item__) => __item__.id)).not.toContain(body.id);
      expect((await walk('&status=__move_to__')).map((__item__) => __item__.id)).toContain(body.id);
    });
    // @end

    describe('the status lifecycle, every pair of states', () => {
      /** Where each status may go besides staying (generate:module --transitions). */
      const TRANSITIONS: Record<string, readonly string[]> = __TRANSITIONS__;
      const STATES = Object.keys(TRANSITIONS);
      // @if createStatus
      const optional = DEFAULT_STATUS === null;
      // @end
      const allowed = (from: string | null, to: string | null) =>
        from === to || (from === null && to !== null) || (from !== null && to !== null && TRANSITIONS[from].includes(to));
      // @if createStatus
      const pairs = (optional ? [null, ...STATES] : STATES).flatMap((from) =>
        (optional ? [...STATES, null] : STATES).map((to) => [from, to, allowed(from, to) ? 200 : 409] as const),
      );
      // @end
      // @if !createStatus
      // From each status a new __noun__ can reach.
      const pairs = Object.keys(PATHS).flatMap((from) =>
        STATES.map((to) => [from, to, allowed(from, to) ? 200 : 409] as const),
      );
      // @end

      it.each(pairs)('from %s to %s: %s', async (from, to, status) => {
        // @if createStatus
        const { body, headers } = await create(from === null ? { name: 'Moving' } : { name: 'Moving', status: from });
        // @end
        // @if !createStatus
        const { body, headers } = await createIn(from);
        // @end
        const res = await patch(body.id, { status: to }, { 'If-Match': headers.etag });
        if (status === 200) {
          expect(contract.check(res)).toBe('update__Item__ 200');
          expect(res.body).toEqual({ ...body, ...(to === null ? {} : { status: to }) });
          // @if createStatus
          expect(res.headers.etag).toBe(from === to ? '"1"' : '"2"');
          // @end
          // @if !createStatus
          expect(res.headers.etag).toBe(`"${PATHS[from].length + (from === to ? 1 : 2)}"`);
          // @end
        } else {
          expectError(res, 'update__Item__ 409', 'invalid_transition');
          expect(res.body.message).toContain(`from ${from ?? '(none)'} to ${to ?? '(none)'}`);
          const after = await get(body.id);
          expect(after.body).toEqual(body);
          expect(after.headers.etag).toBe(headers.etag);
        }
      });
    });

    it('refuses a patch that breaks a rule (400), is not a merge patch (415) or too large (413), and an unknown id (404, before If-Match)', async () => {
      const { body } = await create({ name: 'Rules' });
      const ifMatch = { 'If-Match': '*' };
      for (const [bad, field] of [[{ name: null }, 'name'], [{ id: 9 }, 'id'], [{ status: 'lost' }, 'status']] as const) {
        const res = await patch(body.id, bad, ifMatch);
        expectError(res, 'update__Item__ 400', 'validation_failed');
        expect(res.body.details).toEqual([expect.objectContaining({ field })]);
      }
      // @if immutables
      for (const field of __IMMUTABLE_NAMES__) {
        const res = await patch(body.id, { [field]: body[field] }, ifMatch);
        expectError(res, 'update__Item__ 400', 'validation_failed');
        expect(res.body.details).toEqual([expect.objectContaining({ field })]);
      }
      // @end
      expectError(await patch(body.id, '[1, 2]', ifMatch), 'update__Item__ 400', 'validation_failed');
      expectError(await patch(body.id, {}, { 'If-Match': 'nonsense' }), 'update__Item__ 400', 'validation_failed');
      const asJson = request(http).patch(`/v1/__items-kebab__/${body.id}`).set(AUTH).set(ifMatch);
      expectError(await asJson.send({ name: 'Plain' }), 'update__Item__ 415', 'unsupported_media_type');
      expectError(await patch(body.id, { name: 'x'.repeat(20_000) }, ifMatch), 'update__Item__ 413', 'payload_too_large');
      expectError(await patch(987_654, { name: 'None' }, ifMatch), 'update__Item__ 404', 'not_found');
      expectError(await patch(987_654, { name: 'None' }), 'update__Item__ 404', 'not_found');
      expectError(await patch('abc', { name: 'None' }, ifMatch), 'update__Item__ 400', 'validation_failed');
      const anonymous = request(http).patch(`/v1/__items-kebab__/${body.id}`).set('Content-Type', 'application/merge-patch+json');
      expectError(await anonymous.send('{}'), 'update__Item__ 401', 'unauthorized');
      const huge = await patch(body.id, {}, { ...ifMatch, 'X-Padding': 'x'.repeat(20_000) });
      expectError(huge, 'update__Item__ default', 'headers_too_large');
      expect((await get(body.id)).body).toEqual(body);
    });

    it('routes before it reads a body: 405 with Allow on the collection, 404 on no path', async () => {
      const collection = await request(http).patch('/v1/__items-kebab__').set(AUTH).send({ name: 'x' });
      expect(collection.status).toBe(405);
      expect(collection.headers.allow).toBe('GET, HEAD, POST');
      expect((await request(http).patch('/v1/__items-kebab__-nope/1').set(AUTH).send({ name: 'x' })).status).toBe(404);
    });
    // @each reference
    // @if !immutable

    it('refuses a patch to an unknown __ref__Id: 422 __ref_code__', async () => {
      const { body } = await create({ name: 'Moving' });
      const res = await patch(body.id, { __ref__Id: 987_654 }, { 'If-Match': '*' });
      expectError(res, 'update__Item__ 422', '__ref_code__');
      expect((await get(body.id)).body).toEqual(body);
    });
    // @end
    // @end
    // @end
    // @if delete

    it('deletes: 412 with a stale If-Match, then 204, then 404 for it', async () => {
      const { body } = await create({ name: 'Doomed' });
      await get(body.id);
      expectError(await remove(body.id, { 'If-Match': '"9"' }), 'delete__Item__ 412', 'precondition_failed');

      const deleted = await remove(body.id, { 'If-Match': '"1"' });
      expect(contract.check(deleted)).toBe('delete__Item__ 204');
      expect(deleted.text).toBe('');
      expectError(await get(body.id), 'get__Item__ 404', 'not_found');
      expect(await walk()).not.toContainEqual(body);
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
    expect(served.tags).toContainEqual({ name: '__items-kebab__', description: expect.any(String) });
    expect(Object.keys(served.paths['/__items-kebab__/{__item__Id}'])).toEqual([
      'get',
      // @if update
      'patch',
      // @end
      // @if delete
      'delete',
      // @end
    ]);

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
    let brokenRequired: Record<string, unknown>;

    beforeAll(async () => {
      // TypeORM logs each failed query to the console; that is expected here.
      typeormLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      broken = await startApp();
      brokenRequired = { ...required, ...(await makeRefs(broken.getHttpServer())) };
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
        ['create__Item__ 500', await create({ name: 'First', ...brokenRequired }, {}, server)],
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
    // proves real outages get here); this checks the module's answer. Without the wait for a
    // restart (DB_OUTAGE_WAIT_MS), which would run a change again and find the database back.
    const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    let unavailable: NestExpressApplication;

    beforeAll(async () => {
      unavailable = await startApp({ DB_OUTAGE_WAIT_MS: '0' });
    });

    afterAll(async () => {
      await unavailable.close();
    });

    afterEach(() => jest.restoreAllMocks());

    it.each([
      ['list__Items__ 503', 'list', (server: App) => list('', server)],
      ['create__Item__ 503', 'create', (server: App) => create({ name: 'First' }, {}, server)],
      ['get__Item__ 503', 'get', (server: App) => get(987_654, server)],
      // @if update
      ['update__Item__ 503', 'update', (server: App) => patch(987_654, { name: 'New' }, { 'If-Match': '"1"' }, server)],
      // @end
      // @if delete
      ['delete__Item__ 503', 'delete', (server: App) => remove(987_654, {}, server)],
      // @end
    ] as const)('%s with Retry-After', async (answer, method, send) => {
      jest.spyOn(unavailable.get(__Items__Service), method).mockRejectedValueOnce(refused());
      const res = await send(unavailable.getHttpServer());
      expectError(res, answer, 'service_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
    });
  });

  it('has produced every response its operations document', () => {
    expect(contract.unchecked()).toEqual([]);
  });
});
