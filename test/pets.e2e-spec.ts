import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../src/auth/api-keys.service';
import { requestDigest } from '../src/idempotency/idempotent-requests';
import { IdempotencyService } from '../src/idempotency/idempotency.service';
import { PetsService } from '../src/pets/pets.service';
import { AUTH, startApp, TEST_KEY } from './support/app';
import { committedDocument, ContractValidator } from './support/openapi';

/**
 * The animals module through the whole app, as main.ts builds it (SQLite, or TEST_DATABASE_URL).
 * Every response is checked against the committed openapi.yaml, and the last test asserts that
 * every response the module's operations document was produced.
 */
describe('Pets API (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;
  let contract: ContractValidator;
  /** The required properties every body below has besides its name: fields, and references to records that exist. */
  let required: Record<string, unknown> = {};
  /** The optional properties, each with a valid value. */
  const OPTIONAL = {};
  /** What an animal created without a status has (null: none). */
  const DEFAULT_STATUS: string | null = null;
  const defaultStatus = DEFAULT_STATUS === null ? {} : { status: DEFAULT_STATUS };

  /** Records of the referenced modules, made through their own API in `server`'s database. */
  const makeRefs = (_server: App): Promise<Record<string, number>> => Promise.resolve({});

  beforeAll(async () => {
    app = await startApp();
    http = app.getHttpServer();
    contract = await ContractValidator.forPaths('/pets');
    required = { ...{ categoryId: 7 }, ...(await makeRefs(http)) };
  });

  afterAll(async () => {
    await app.close();
  });

  const list = (query = '', server: App = http) => request(server).get(`/v1/pets${query}`).set(AUTH);
  const create = (body: object, headers: Record<string, string> = {}, server: App = http) =>
    request(server)
      .post('/v1/pets')
      .set(AUTH)
      .set(headers)
      .send({ ...required, ...body });
  const get = (id: number | string, server: App = http) => request(server).get(`/v1/pets/${id}`).set(AUTH);
  /** A merge patch (`body`, or raw JSON text) with these headers (If-Match). */
  const patch = (
    id: number | string,
    body: object | string,
    headers: Record<string, string> = {},
    server: App = http,
  ) =>
    request(server)
      .patch(`/v1/pets/${id}`)
      .set(AUTH)
      .set('Content-Type', 'application/merge-patch+json')
      .set(headers)
      .send(typeof body === 'string' ? body : JSON.stringify(body));
  /** Every animal of the list (of one status), page by page. */
  async function walk(query = ''): Promise<{ id: number; name: string }[]> {
    const seen: { id: number; name: string }[] = [];
    let next: string | undefined = `/v1/pets?limit=2${query}`;
    while (next) {
      const page: request.Response = await request(http).get(next).set(AUTH);
      expect(contract.check(page)).toBe('listPets 200');
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
    expect(contract.check(res)).toBe('listPets 200');
    expect(res.body).toEqual([]);
    expect(res.headers.link).toBeUndefined();
  });

  it('needs an API key: 401 in the Error shape without one', async () => {
    const res = await request(http).get('/v1/pets');
    expectError(res, 'listPets 401', 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
    expectError(await request(http).post('/v1/pets').send({}), 'createPet 401', 'unauthorized');
    expectError(await request(http).get('/v1/pets/1'), 'getPet 401', 'unauthorized');
  });

  it('creates an animal: 201 with Location and ETag, and gets it there', async () => {
    const created = await create({ name: 'First', ...OPTIONAL });
    expect(contract.check(created)).toBe('createPet 201');
    expect(created.body).toEqual({
      id: expect.any(Number),
      name: 'First',
      ...required,
      ...OPTIONAL,
      ...defaultStatus,
    });
    expect(created.headers.location).toBe(`/v1/pets/${created.body.id}`);
    expect(created.headers.etag).toBe('"1"');

    const read = await request(http).get(created.headers.location).set(AUTH);
    expect(contract.check(read)).toBe('getPet 200');
    expect(read.body).toEqual(created.body);
    expect(read.headers.etag).toBe('"1"');
    const other = await create({ name: 'Second', status: 'pending' });
    expect(other.body).toEqual({ id: expect.any(Number), name: 'Second', ...required, status: 'pending' });
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['a wrong type', { name: 7 }, 'name'],
    ['an unknown property', { name: 'First', id: 3 }, 'id'],
    ['a status that is not one', { name: 'First', status: 'lost' }, 'status'],
  ])('refuses %s: 400 validation_failed naming the field', async (_label, body, field) => {
    const res = await create(body);
    expectError(res, 'createPet 400', 'validation_failed');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('refuses malformed JSON (400), a body that is not JSON (415) and one over the limit (413)', async () => {
    const malformed = request(http).post('/v1/pets').set(AUTH).set('Content-Type', 'application/json');
    expectError(await malformed.send('{"name":'), 'createPet 400', 'invalid_json');
    const text = request(http).post('/v1/pets').set(AUTH).set('Content-Type', 'text/plain');
    expectError(await text.send('name=First'), 'createPet 415', 'unsupported_media_type');
    expectError(await create({ name: 'x'.repeat(20_000) }), 'createPet 413', 'payload_too_large');
  });

  it('answers what the HTTP layer refuses before an operation runs (its default response)', async () => {
    const textBody = (path: string) =>
      request(http).get(path).set(AUTH).set('Content-Type', 'text/plain').send('x');
    expectError(await textBody('/v1/pets'), 'listPets default', 'unsupported_media_type');
    expectError(await textBody('/v1/pets/1'), 'getPet default', 'unsupported_media_type');
    const huge = await create({ name: 'Padded' }, { 'X-Padding': 'x'.repeat(20_000) });
    expectError(huge, 'createPet default', 'headers_too_large');
  });

  it('answers 400 for an id that is not a number and 404 for one no animal has', async () => {
    expectError(await get('abc'), 'getPet 400', 'validation_failed');
    expectError(await get(0), 'getPet 404', 'not_found');
    expectError(await get(999_999_999), 'getPet 404', 'not_found');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await request(http).delete('/v1/pets').set(AUTH);
    expect(res.status).toBe(405);
    expect(res.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('pages with limit and a next link until the last page, in id order, of all or of one status', async () => {
    const before = await walk();
    const made = [];
    for (const name of ['b', 'c', 'd']) made.push((await create({ name, status: 'pending' })).body);
    const all = await walk();
    expect(all).toEqual([...before, ...made]);
    expect(all.map((pet) => pet.id)).toEqual([...all.map((pet) => pet.id)].sort((x, y) => x - y));
    expect(await walk('&status=pending')).toEqual(
      all.filter((pet) => 'status' in pet && pet.status === 'pending'),
    );
    expectError(await list('?limit=0'), 'listPets 400', 'validation_failed');
    expectError(await list('?status=lost'), 'listPets 400', 'validation_failed');
  });

  it('replays a create retried with the same Idempotency-Key, 422 with another body, 409 in flight', async () => {
    const key = { 'Idempotency-Key': 'pets-retry-1' };
    const first = await create({ name: 'Once' }, key);
    const retry = await create({ name: 'Once' }, key);
    expect(contract.check(retry)).toBe('createPet 201');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expectError(await create({ name: 'Other' }, key), 'createPet 422', 'idempotency_key_reused');

    // A request still in flight holds its key: reserve one as such a request would.
    const body = { ...required, name: 'In flight' };
    await app.get(IdempotencyService).claim(hashApiKey(TEST_KEY), 'pets-retry-2', requestDigest(body));
    const busy = await create(body, { 'Idempotency-Key': 'pets-retry-2' });
    expectError(busy, 'createPet 409', 'idempotency_conflict');
  });

  describe('changes with ETag and If-Match', () => {
    it('updates with a merge patch: 428 without If-Match, 412 with a stale one, 200 and a new ETag with the current one', async () => {
      const created = await create({ name: 'Draft', ...OPTIONAL });
      expect(created.headers.etag).toBe('"1"');
      const path = created.headers.location;

      expectError(await patch(created.body.id, { name: 'Final' }), 'updatePet 428', 'precondition_required');
      expectError(
        await patch(created.body.id, { name: 'Final' }, { 'If-Match': '"7"' }),
        'updatePet 412',
        'precondition_failed',
      );

      const removals = Object.fromEntries(Object.keys(OPTIONAL).map((field) => [field, null]));
      const updated = await patch(created.body.id, { name: 'Final', ...removals }, { 'If-Match': '"1"' });
      expect(contract.check(updated)).toBe('updatePet 200');
      expect(updated.headers.etag).toBe('"2"');
      expect(updated.body).toEqual({ id: created.body.id, name: 'Final', ...required, ...defaultStatus });
      const after = await request(http).get(path).set(AUTH);
      expect(after.body).toEqual(updated.body);
      expect(after.headers.etag).toBe('"2"');

      // The first version is gone: its ETag no longer matches, `*` does.
      expectError(
        await patch(created.body.id, { name: 'Lost' }, { 'If-Match': '"1"' }),
        'updatePet 412',
        'precondition_failed',
      );
      expect((await patch(created.body.id, { name: 'Again' }, { 'If-Match': '*' })).body.name).toBe('Again');
    });

    it('answers a patch that changes nothing with the animal as it is: same ETag, no new version', async () => {
      const { body } = await create({ name: 'Same', ...OPTIONAL });
      for (const unchanged of [{}, { name: 'Same' }, { name: 'Same', ...OPTIONAL }]) {
        const res = await patch(body.id, unchanged, { 'If-Match': '"1"' });
        expect(contract.check(res)).toBe('updatePet 200');
        expect(res.headers.etag).toBe('"1"');
        expect(res.body).toEqual(body);
      }
      expect((await get(body.id)).headers.etag).toBe('"1"');
    });

    it('lets exactly one of 50 changes made with the same If-Match through: the others are 412', async () => {
      const { body } = await create({ name: 'Contested' });
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          patch(body.id, { name: `Claim ${index}` }, { 'If-Match': '"1"' }),
        ),
      );
      expect(answers.filter((res) => res.status === 200)).toHaveLength(1);
      expect(answers.filter((res) => res.status === 412)).toHaveLength(49);
      const winner = answers.find((res) => res.status === 200)!;
      expect((await get(body.id)).body).toEqual(winner.body);
    });

    it('refuses a change past the largest version JSON carries exactly: 409 version_limit_reached', async () => {
      const { body } = await create({ name: 'Old' });
      const last = Number.MAX_SAFE_INTEGER;
      await app.get(DataSource).query(`UPDATE pets SET version = ${last} WHERE id = ${Number(body.id)}`);
      const res = await patch(body.id, { name: 'New' }, { 'If-Match': `"${last}"` });
      expectError(res, 'updatePet 409', 'version_limit_reached');
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

    it('moves an animal between the status lists at once', async () => {
      const { body } = await create({ name: 'Mover', status: 'available' });
      expect(await walk('&status=available')).toContainEqual(body);
      await patch(body.id, { status: 'pending' }, { 'If-Match': '"1"' });
      expect((await walk('&status=available')).map((pet) => pet.id)).not.toContain(body.id);
      expect((await walk('&status=pending')).map((pet) => pet.id)).toContain(body.id);
    });

    describe('the status lifecycle, every pair of states', () => {
      /** Where each status may go besides staying (generate:module --transitions). */
      const TRANSITIONS: Record<string, readonly string[]> = {
        available: ['pending', 'sold'],
        pending: ['available', 'sold'],
        sold: [],
      };
      const STATES = Object.keys(TRANSITIONS);
      const optional = DEFAULT_STATUS === null;
      const allowed = (from: string | null, to: string | null) =>
        from === to ||
        (from === null && to !== null) ||
        (from !== null && to !== null && TRANSITIONS[from].includes(to));
      const pairs = (optional ? [null, ...STATES] : STATES).flatMap((from) =>
        (optional ? [...STATES, null] : STATES).map(
          (to) => [from, to, allowed(from, to) ? 200 : 409] as const,
        ),
      );

      it.each(pairs)('from %s to %s: %s', async (from, to, status) => {
        const { body, headers } = await create(
          from === null ? { name: 'Moving' } : { name: 'Moving', status: from },
        );
        const res = await patch(body.id, { status: to }, { 'If-Match': headers.etag });
        if (status === 200) {
          expect(contract.check(res)).toBe('updatePet 200');
          expect(res.body).toEqual({ ...body, ...(to === null ? {} : { status: to }) });
          expect(res.headers.etag).toBe(from === to ? '"1"' : '"2"');
        } else {
          expectError(res, 'updatePet 409', 'invalid_transition');
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
      for (const [bad, field] of [
        [{ name: null }, 'name'],
        [{ id: 9 }, 'id'],
        [{ status: 'lost' }, 'status'],
      ] as const) {
        const res = await patch(body.id, bad, ifMatch);
        expectError(res, 'updatePet 400', 'validation_failed');
        expect(res.body.details).toEqual([expect.objectContaining({ field })]);
      }
      expectError(await patch(body.id, '[1, 2]', ifMatch), 'updatePet 400', 'validation_failed');
      expectError(await patch(body.id, {}, { 'If-Match': 'nonsense' }), 'updatePet 400', 'validation_failed');
      const asJson = request(http).patch(`/v1/pets/${body.id}`).set(AUTH).set(ifMatch);
      expectError(await asJson.send({ name: 'Plain' }), 'updatePet 415', 'unsupported_media_type');
      expectError(
        await patch(body.id, { name: 'x'.repeat(20_000) }, ifMatch),
        'updatePet 413',
        'payload_too_large',
      );
      expectError(await patch(987_654, { name: 'None' }, ifMatch), 'updatePet 404', 'not_found');
      expectError(await patch(987_654, { name: 'None' }), 'updatePet 404', 'not_found');
      expectError(await patch('abc', { name: 'None' }, ifMatch), 'updatePet 400', 'validation_failed');
      const anonymous = request(http)
        .patch(`/v1/pets/${body.id}`)
        .set('Content-Type', 'application/merge-patch+json');
      expectError(await anonymous.send('{}'), 'updatePet 401', 'unauthorized');
      const huge = await patch(body.id, {}, { ...ifMatch, 'X-Padding': 'x'.repeat(20_000) });
      expectError(huge, 'updatePet default', 'headers_too_large');
      expect((await get(body.id)).body).toEqual(body);
    });

    it('routes before it reads a body: 405 with Allow on the collection, 404 on no path', async () => {
      const collection = await request(http).patch('/v1/pets').set(AUTH).send({ name: 'x' });
      expect(collection.status).toBe(405);
      expect(collection.headers.allow).toBe('GET, HEAD, POST');
      expect((await request(http).patch('/v1/pets-nope/1').set(AUTH).send({ name: 'x' })).status).toBe(404);
    });
  });

  it('is described in /docs-json, tagged, exactly as in the committed openapi.yaml', async () => {
    const served = (await request(http).get('/docs-json')).body;
    expect(Object.keys(served.paths['/pets']).sort()).toEqual(['get', 'post']);
    expect(served.tags).toContainEqual({ name: 'pets', description: expect.any(String) });
    expect(Object.keys(served.paths['/pets/{petId}'])).toEqual(['get', 'patch']);

    // A stale openapi.yaml (a column added, the document not exported): run `npm run openapi:export`.
    const committed = await committedDocument();
    for (const path of ['/pets', '/pets/{petId}']) {
      expect(committed.paths[path]).toEqual(served.paths[path]);
    }
    for (const schema of ['Pet', 'NewPet', 'PetStatus']) {
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
      expectError(await list('', server), 'listPets 429', 'rate_limited');
      expectError(await create({ name: 'First' }, {}, server), 'createPet 429', 'rate_limited');
      expectError(await get(1, server), 'getPet 429', 'rate_limited');
      expectError(
        await patch(1, { name: 'New' }, { 'If-Match': '"1"' }, server),
        'updatePet 429',
        'rate_limited',
      );
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
      await database.query(`DROP TABLE pets${cascade}`);
    });

    afterAll(async () => {
      await broken.close();
      typeormLog.mockRestore();
    });

    it('answers every operation 500 without internals', async () => {
      const server = broken.getHttpServer();
      const expected = { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 };
      for (const [answer, res] of [
        ['listPets 500', await list('', server)],
        ['createPet 500', await create({ name: 'First', ...brokenRequired }, {}, server)],
        ['getPet 500', await get(1, server)],
        ['updatePet 500', await patch(1, { name: 'New' }, { 'If-Match': '"1"' }, server)],
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
    const refused = () =>
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    let unavailable: NestExpressApplication;

    beforeAll(async () => {
      unavailable = await startApp({ DB_OUTAGE_WAIT_MS: '0' });
    });

    afterAll(async () => {
      await unavailable.close();
    });

    afterEach(() => jest.restoreAllMocks());

    it.each([
      ['listPets 503', 'list', (server: App) => list('', server)],
      ['createPet 503', 'create', (server: App) => create({ name: 'First' }, {}, server)],
      ['getPet 503', 'get', (server: App) => get(987_654, server)],
      [
        'updatePet 503',
        'update',
        (server: App) => patch(987_654, { name: 'New' }, { 'If-Match': '"1"' }, server),
      ],
    ] as const)('%s with Retry-After', async (answer, method, send) => {
      jest.spyOn(unavailable.get(PetsService), method).mockRejectedValueOnce(refused());
      const res = await send(unavailable.getHttpServer());
      expectError(res, answer, 'service_unavailable');
      expect(res.headers['retry-after']).toBeDefined();
    });
  });

  it('has produced every response its operations document', () => {
    expect(contract.unchecked()).toEqual([]);
  });
});
