import request from 'supertest';
import { AUTH, TEST_KEY, useApp, withApp } from './support/app';

const MAX_EXACT = 9007199254740991;
const DEPRECATION = {
  deprecation: '@1735689600',
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  link: '</docs>; rel="deprecation"',
};

describe('Pets API (e2e, in-memory SQLite)', () => {
  const api = useApp();

  const create = (body: unknown) =>
    request(api.http)
      .post('/v1/pets')
      .set(AUTH)
      .send(body as object);

  function expectError(res: request.Response, status: number, code: string): void {
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({ code, status });
    expect(typeof res.body.message).toBe('string');
    expect(Object.keys(res.body).sort()).toEqual(
      res.body.details ? ['code', 'details', 'message', 'status'] : ['code', 'message', 'status'],
    );
  }

  describe('authentication', () => {
    it.each([
      ['GET', '/v1/pets'],
      ['POST', '/v1/pets'],
      ['GET', '/v1/pets/1'],
    ])('%s %s without a key is 401 with WWW-Authenticate', async (method, path) => {
      const res = await request(api.http)[method === 'GET' ? 'get' : 'post'](path);
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="petstore"');
    });

    it('a wrong key is 401 invalid_token and the key is not echoed', async () => {
      const res = await request(api.http)
        .get('/v1/pets')
        .set('Authorization', 'Bearer wrong-key-that-is-long');
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="petstore", error="invalid_token"');
      expect(JSON.stringify(res.body)).not.toContain('wrong-key');
    });

    it('another scheme is treated as no bearer key', async () => {
      const res = await request(api.http).get('/v1/pets').set('Authorization', `Basic ${TEST_KEY}`);
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="petstore"');
    });

    it('"Bearer" with no token is 401 invalid_token', async () => {
      const res = await request(api.http).get('/v1/pets').set('Authorization', 'Bearer ');
      expectError(res, 401, 'unauthorized');
    });

    it('the scheme name is case-insensitive', async () => {
      const res = await request(api.http).get('/v1/pets').set('Authorization', `bEaReR ${TEST_KEY}`);
      expect(res.status).toBe(200);
    });

    it('authentication runs before validation: an invalid body without a key is 401', async () => {
      const res = await request(api.http).post('/v1/pets').send({ name: '', categoryId: 'x', id: 3 });
      expectError(res, 401, 'unauthorized');
    });

    it('a key is not accepted in the query string', async () => {
      const res = await request(api.http).get(`/v1/pets?api_key=${TEST_KEY}`);
      expectError(res, 401, 'unauthorized');
    });
  });

  describe('routing', () => {
    it.each([{}, AUTH])('an unknown path is 404 not_found (headers %o)', async (headers) => {
      const res = await request(api.http).get('/v1/orders').set(headers);
      expectError(res, 404, 'not_found');
      const outside = await request(api.http).get('/nothing-here').set(headers);
      expectError(outside, 404, 'not_found');
    });

    it('the API is not served without the /v1 prefix', async () => {
      expectError(await request(api.http).get('/pets').set(AUTH), 404, 'not_found');
    });

    it('a known path with an unsupported method is 405 with Allow', async () => {
      const res = await request(api.http).delete('/v1/pets').set(AUTH);
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      const one = await request(api.http).put('/v1/pets/1').set(AUTH).send({});
      expectError(one, 405, 'method_not_allowed');
      expect(one.headers.allow).toBe('GET, HEAD, PATCH');
    });

    it.each(['/v1/pets?limit=2', '/v1/pets/1'])(
      'HEAD %s answers the headers of GET, Content-Length included, and no body',
      async (path) => {
        await create({ name: 'Headed', categoryId: 3 });
        const get = await request(api.http).get(path).set(AUTH);
        const head = await request(api.http).head(path).set(AUTH);
        expect(get.status).toBe(200);
        expect(head.status).toBe(200);
        expect(head.text ?? '').toBe('');
        expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.text)));
        const { date: _getDate, 'x-request-id': _getId, ...getHeaders } = get.headers;
        const { date: _headDate, 'x-request-id': _headId, ...headHeaders } = head.headers;
        expect(headHeaders).toEqual(getHeaders);
      },
    );

    it.each(['/v1/pets?limit=2', '/v1/pets/1'])(
      'GET %s with If-None-Match: * is 304 without a body; with another tag or no-cache, 200',
      async (path) => {
        await create({ name: 'Conditional', categoryId: 3 });
        const none = await request(api.http).get(path).set(AUTH).set('If-None-Match', '*');
        expect(none.status).toBe(304);
        expect(none.text ?? '').toBe('');
        expect(none.headers['content-type']).toBeUndefined();
        expect(none.headers['x-content-type-options']).toBe('nosniff');
        const other = await request(api.http).get(path).set(AUTH).set('If-None-Match', '"abc"');
        expect(other.status).toBe(200);
        const reload = await request(api.http)
          .get(path)
          .set(AUTH)
          .set({ 'If-None-Match': '*', 'Cache-Control': 'no-cache' });
        expect(reload.status).toBe(200);
      },
    );

    it('sets secure headers and hides the framework', async () => {
      const res = await request(api.http).get('/v1/pets').set(AUTH);
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBeDefined();
    });
  });

  describe('POST /v1/pets (createPet)', () => {
    it('creates an animal: 201, the full Animal and a Location header', async () => {
      const res = await create({ name: 'Rex', categoryId: 7, status: 'available' });
      expect(res.status).toBe(201);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
      expect(res.headers.location).toBe(`/v1/pets/${res.body.id}`);
    });

    it('an animal without status is returned without a status key, never null', async () => {
      const res = await create({ name: 'Nameless status', categoryId: 1 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(Number), name: 'Nameless status', categoryId: 1 });
      expect('status' in res.body).toBe(false);
      const read = await request(api.http).get(`/v1/pets/${res.body.id}`).set(AUTH);
      expect(read.body).toEqual(res.body);
    });

    it.each(['available', 'pending', 'sold'])('accepts status %s', async (status) => {
      const res = await create({ name: `Pet ${status}`, categoryId: 2, status });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe(status);
    });

    it('ids start at 1 and only grow', async () => {
      const first = await create({ name: 'A', categoryId: 1 });
      const second = await create({ name: 'B', categoryId: 1 });
      expect(first.body.id).toBeGreaterThanOrEqual(1);
      expect(second.body.id).toBeGreaterThan(first.body.id);
    });

    it('stores and returns the name exactly as sent (no trimming, no normalisation)', async () => {
      const names = [
        '  padded  ',
        'Cafe\u0301',
        'Café',
        '😀'.repeat(255),
        'a'.repeat(255),
        'Ωμέγα 猫 🐈‍⬛',
        '<script>',
      ];
      for (const name of names) {
        const res = await create({ name, categoryId: 3 });
        expect(res.status).toBe(201);
        expect(res.body.name).toBe(name);
        const read = await request(api.http).get(`/v1/pets/${res.body.id}`).set(AUTH);
        expect(read.body.name).toBe(name);
      }
    });

    it('accepts categoryId at both bounds, exactly', async () => {
      for (const categoryId of [1, MAX_EXACT]) {
        const res = await create({ name: 'Bound', categoryId });
        expect(res.status).toBe(201);
        expect(res.text).toContain(`"categoryId":${categoryId}`);
      }
    });

    const invalidBodies: Array<[string, unknown, string]> = [
      ['missing name', { categoryId: 1 }, 'name'],
      ['missing categoryId', { name: 'Rex' }, 'categoryId'],
      ['empty object', {}, 'name'],
      ['name not a string', { name: 5, categoryId: 1 }, 'name'],
      ['empty name', { name: '', categoryId: 1 }, 'name'],
      ['blank name', { name: ' \t ', categoryId: 1 }, 'name'],
      ['name with NUL', { name: 'a\u0000b', categoryId: 1 }, 'name'],
      ['name with a newline', { name: 'a\nb', categoryId: 1 }, 'name'],
      ['name with DEL', { name: 'a\u007f', categoryId: 1 }, 'name'],
      ['name of 256 characters', { name: 'a'.repeat(256), categoryId: 1 }, 'name'],
      ['name of 256 astral characters', { name: '😀'.repeat(256), categoryId: 1 }, 'name'],
      ['categoryId as a string', { name: 'Rex', categoryId: '5' }, 'categoryId'],
      ['categoryId fractional', { name: 'Rex', categoryId: 1.5 }, 'categoryId'],
      ['categoryId 0', { name: 'Rex', categoryId: 0 }, 'categoryId'],
      ['categoryId negative', { name: 'Rex', categoryId: -1 }, 'categoryId'],
      ['categoryId 2^53', { name: 'Rex', categoryId: MAX_EXACT + 1 }, 'categoryId'],
      ['categoryId 1e19', { name: 'Rex', categoryId: 1e19 }, 'categoryId'],
      ['categoryId null', { name: 'Rex', categoryId: null }, 'categoryId'],
      ['categoryId boolean', { name: 'Rex', categoryId: true }, 'categoryId'],
      ['status null', { name: 'Rex', categoryId: 1, status: null }, 'status'],
      ['status unknown', { name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
      ['status wrong case', { name: 'Rex', categoryId: 1, status: 'SOLD' }, 'status'],
      ['id sent', { id: 9, name: 'Rex', categoryId: 1 }, 'id'],
      ['unknown property', { name: 'Rex', categoryId: 1, colour: 'red' }, 'colour'],
    ];

    it.each(invalidBodies)('%s is 400 validation_failed naming the field', async (_case, body, field) => {
      const res = await create(body);
      expectError(res, 400, 'validation_failed');
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(res.body.message).toContain(field);
    });

    it('names every broken field at once', async () => {
      const res = await create({ name: '', categoryId: 'x', status: 'x' });
      expectError(res, 400, 'validation_failed');
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
        'categoryId',
        'name',
        'status',
      ]);
    });

    it.each([
      ['an array', '[{"name":"Rex","categoryId":1}]'],
      ['a string', '"Rex"'],
      ['a number', '42'],
      ['null', 'null'],
    ])('a body that is %s is 400 validation_failed', async (_case, raw) => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send(raw);
      expectError(res, 400, 'validation_failed');
      expect(res.body.details).toEqual([
        { field: 'body', message: 'the request body must be a JSON object' },
      ]);
    });

    it('a missing body is 400 validation_failed', async () => {
      const res = await request(api.http).post('/v1/pets').set(AUTH);
      expectError(res, 400, 'validation_failed');
    });

    it('a lone surrogate in name is refused, not stored as U+FFFD', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send('{"name":"a\\ud800b","categoryId":1}');
      expectError(res, 400, 'validation_failed');
    });

    it('a __proto__ key is refused as an unknown property', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send('{"__proto__":{"admin":true},"name":"Rex","categoryId":1}');
      expectError(res, 400, 'validation_failed');
    });

    it('deeply nested JSON is 400, not a stack overflow', async () => {
      const deep = `{"name":${'['.repeat(5000)}${']'.repeat(5000)},"categoryId":1}`;
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send(deep);
      expectError(res, 400, 'validation_failed');
    });

    it('malformed JSON is 400 invalid_json without parser internals', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send('{"name":"Rex",');
      expectError(res, 400, 'invalid_json');
      expect(res.body.message).not.toMatch(/position|token|SyntaxError/i);
    });

    it.each([
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ])('a body sent as %s is 415 unsupported_media_type', async (type) => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', type)
        .send('name=Rex');
      expectError(res, 415, 'unsupported_media_type');
    });

    it('accepts application/json with a charset parameter', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json; charset=UTF-8')
        .send(JSON.stringify({ name: 'Charset', categoryId: 1 }));
      expect(res.status).toBe(201);
    });

    it('a body over 16 KiB is 413 payload_too_large', async () => {
      const res = await create({ name: 'x'.repeat(17 * 1024), categoryId: 1 });
      expectError(res, 413, 'payload_too_large');
    });

    it('a body just under 16 KiB is parsed (and then validated)', async () => {
      const res = await create({ name: 'x'.repeat(16 * 1024 - 40), categoryId: 1 });
      expectError(res, 400, 'validation_failed');
    });
  });

  describe('GET /v1/pets (listPets)', () => {
    const fresh = useApp();
    const statuses = ['available', 'pending', 'sold', undefined];

    beforeAll(async () => {
      for (let i = 0; i < 130; i++) {
        const status = statuses[i % 4];
        const res = await request(fresh.http)
          .post('/v1/pets')
          .set(AUTH)
          .send({ name: `Pet ${i}`, categoryId: i + 1, ...(status ? { status } : {}) });
        expect(res.status).toBe(201);
      }
    });

    const list = (query: string) => request(fresh.http).get(`/v1/pets${query}`).set(AUTH);

    it('returns 20 animals by default, oldest first', async () => {
      const res = await list('');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toHaveLength(20);
      expect(res.body[0]).toEqual({ id: 1, name: 'Pet 0', categoryId: 1, status: 'available' });
      expect(res.body[3]).toEqual({ id: 4, name: 'Pet 3', categoryId: 4 });
      const ids = res.body.map((pet: { id: number }) => pet.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    });

    it.each([
      ['1', 1],
      ['37', 37],
      ['100', 100],
      ['007', 7],
    ])('limit=%s returns %i animals', async (limit, count) => {
      const res = await list(`?limit=${limit}`);
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(count);
    });

    it.each(['0', '101', '-1', '1.5', 'abc', '', '1e2', '+5', ' 5', '0x10', '99999999999999999999'])(
      'limit=%p is 400 validation_failed',
      async (limit) => {
        const res = await list(`?limit=${encodeURIComponent(limit)}`);
        expectError(res, 400, 'validation_failed');
        expect(res.body.details).toEqual([
          { field: 'limit', message: 'limit must be an integer from 1 to 100' },
        ]);
      },
    );

    it('limit given twice is 400', async () => {
      expectError(await list('?limit=5&limit=6'), 400, 'validation_failed');
    });

    it.each(['available', 'pending', 'sold'])('status=%s returns only those animals', async (status) => {
      const res = await list(`?status=${status}&limit=100`);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.every((pet: { status: string }) => pet.status === status)).toBe(true);
      const expected = Array.from({ length: 130 }, (_, i) => i).filter(
        (i) => statuses[i % 4] === status,
      ).length;
      expect(res.body).toHaveLength(Math.min(expected, 100));
    });

    it.each(['lost', '', 'SOLD', 'null'])('status=%p is 400 validation_failed', async (status) => {
      const res = await list(`?status=${status}`);
      expectError(res, 400, 'validation_failed');
      expect(res.body.details[0].field).toBe('status');
    });

    it('status given twice is 400', async () => {
      expectError(await list('?status=sold&status=pending'), 400, 'validation_failed');
    });

    it('unknown query parameters are ignored', async () => {
      const res = await list('?limit=2&page=3&offset=x');
      expect(res.status).toBe(200);
      expect(res.body.map((pet: { id: number }) => pet.id)).toEqual([1, 2]);
    });

    it('an empty filter result is an empty array', async () => {
      const res = await withApp({}, (empty) =>
        request(empty.getHttpServer()).get('/v1/pets?status=sold').set(AUTH),
      );
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    });
  });

  describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
    let id: number;

    beforeAll(async () => {
      id = (await create({ name: 'Findable', categoryId: 11, status: 'pending' })).body.id;
    });

    it('returns the animal with the deprecation headers', async () => {
      const res = await request(api.http).get(`/v1/pets/${id}`).set(AUTH);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id, name: 'Findable', categoryId: 11, status: 'pending' });
      expect(res.headers).toMatchObject(DEPRECATION);
    });

    it.each(['999999', '0', '-1', '9007199254740992', '9223372036854775807', '-9223372036854775808'])(
      'a well-formed id with no animal (%s) is 404 not_found',
      async (petId) => {
        const res = await request(api.http).get(`/v1/pets/${petId}`).set(AUTH);
        expectError(res, 404, 'not_found');
        expect(res.headers).toMatchObject(DEPRECATION);
      },
    );

    it.each(['abc', '1.5', '1e3', '9223372036854775808', '-9223372036854775809', '%20', '0x1', '1;2'])(
      'a petId that is not a decimal int64 (%s) is 400 validation_failed',
      async (petId) => {
        const res = await request(api.http).get(`/v1/pets/${petId}`).set(AUTH);
        expectError(res, 400, 'validation_failed');
        expect(res.body.details).toEqual([
          { field: 'petId', message: 'petId must be a decimal integer (int64)' },
        ]);
        expect(res.headers).toMatchObject(DEPRECATION);
      },
    );

    it('a broken percent-encoding in petId is 400, not 500', async () => {
      const res = await request(api.http).get('/v1/pets/%E0%A4%A').set(AUTH);
      expectError(res, 400, 'validation_failed');
    });

    it('401 answers of the deprecated operation carry the deprecation headers too', async () => {
      const res = await request(api.http).get(`/v1/pets/${id}`);
      expectError(res, 401, 'unauthorized');
      expect(res.headers).toMatchObject(DEPRECATION);
    });

    it('other operations carry no deprecation headers', async () => {
      const res = await request(api.http).get('/v1/pets').set(AUTH);
      expect(res.headers.deprecation).toBeUndefined();
      expect(res.headers.sunset).toBeUndefined();
    });
  });

  describe('concurrency', () => {
    it('200 concurrent creates all succeed with unique ids and all read back', async () => {
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => create({ name: `Concurrent ${i}`, categoryId: 5 })),
      );
      expect(results.every((res) => res.status === 201)).toBe(true);
      const ids = new Set(results.map((res) => res.body.id as number));
      expect(ids.size).toBe(200);
      const reads = await Promise.all(
        [...ids].map((petId) => request(api.http).get(`/v1/pets/${petId}`).set(AUTH)),
      );
      expect(reads.every((res) => res.status === 200)).toBe(true);
    });
  });
});
