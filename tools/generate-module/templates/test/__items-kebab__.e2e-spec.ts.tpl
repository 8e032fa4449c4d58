import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type { App } from 'supertest/types';
import { AUTH, startApp } from './support/app';

/** The __nouns__ module through the whole app, as main.ts builds it (SQLite, or TEST_DATABASE_URL). */
describe('__Items__ API (e2e)', () => {
  let app: NestExpressApplication;
  let http: App;

  beforeAll(async () => {
    app = await startApp();
    http = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
  });

  const create = (body: object, headers: Record<string, string> = {}) =>
    request(http).post('/v1/__items-kebab__').set(AUTH).set(headers).send(body);

  /** An answer in the Error shape: `{code, message, status}` (and `details` for validation). */
  function expectError(res: request.Response, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({ code, status, message: expect.any(String) });
  }

  it('lists nothing at first', async () => {
    const res = await request(http).get('/v1/__items-kebab__').set(AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.link).toBeUndefined();
  });

  it('needs an API key: 401 in the Error shape without one', async () => {
    const res = await request(http).get('/v1/__items-kebab__');
    expectError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer /);
  });

  it('creates __a_noun__: 201 with Location, and gets it there', async () => {
    const created = await create({ name: 'First', description: 'The first one' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), name: 'First', description: 'The first one' });
    expect(created.headers.location).toBe(`/v1/__items-kebab__/${created.body.id}`);

    const read = await request(http).get(created.headers.location).set(AUTH);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['a wrong type', { name: 7 }, 'name'],
    ['an unknown property', { name: 'First', id: 3 }, 'id'],
  ])('refuses %s: 400 validation_failed naming the field', async (_label, body, field) => {
    const res = await create(body);
    expectError(res, 400, 'validation_failed');
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('refuses malformed JSON: 400 invalid_json', async () => {
    const res = await request(http)
      .post('/v1/__items-kebab__')
      .set(AUTH)
      .set('Content-Type', 'application/json')
      .send('{"name":');
    expectError(res, 400, 'invalid_json');
  });

  it('answers 400 for an id that is not a number and 404 for one no __noun__ has', async () => {
    expectError(await request(http).get('/v1/__items-kebab__/abc').set(AUTH), 400, 'validation_failed');
    expectError(await request(http).get('/v1/__items-kebab__/0').set(AUTH), 404, 'not_found');
    expectError(await request(http).get('/v1/__items-kebab__/999999999').set(AUTH), 404, 'not_found');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const res = await request(http).delete('/v1/__items-kebab__').set(AUTH);
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('pages with limit and a next link until the last page', async () => {
    for (const name of ['b', 'c', 'd']) expect((await create({ name })).status).toBe(201);
    const seen: string[] = [];
    let next: string | undefined = '/v1/__items-kebab__?limit=2';
    while (next) {
      const page: request.Response = await request(http).get(next).set(AUTH);
      expect(page.status).toBe(200);
      expect(page.body.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.map((__item__: { name: string }) => __item__.name));
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.link ?? '')?.[1];
    }
    expect(seen).toEqual(['First', 'b', 'c', 'd']);
    expectError(await request(http).get('/v1/__items-kebab__?limit=0').set(AUTH), 400, 'validation_failed');
  });

  it('replays a create retried with the same Idempotency-Key', async () => {
    const key = { 'Idempotency-Key': '__items-kebab__-retry-1' };
    const first = await create({ name: 'Once' }, key);
    const retry = await create({ name: 'Once' }, key);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expectError(await create({ name: 'Other' }, key), 422, 'idempotency_key_reused');
  });

  it('is described in /docs-json, tagged, with its error responses', async () => {
    const document = (await request(http).get('/docs-json')).body;
    const collection = document.paths['/__items-kebab__'];
    const one = document.paths['/__items-kebab__/{__item__Id}'];
    expect(Object.keys(collection).sort()).toEqual(['get', 'post']);
    expect(Object.keys(one)).toEqual(['get']);
    expect(document.tags).toContainEqual({ name: '__Items__', description: expect.any(String) });
    for (const operation of [collection.get, collection.post, one.get]) {
      expect(operation.tags).toEqual(['__Items__']);
      expect(operation.responses['401'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
    }
    expect(Object.keys(one.get.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
    expect(Object.keys(collection.post.responses)).toEqual(expect.arrayContaining(['201', '400', '409', '422']));
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['__Item__', 'New__Item__']),
    );
  });
});
