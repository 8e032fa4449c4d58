import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request, { Response } from 'supertest';
import type { App } from 'supertest/types';
import { DataSource } from 'typeorm';
import { hashApiKey } from '../src/auth/api-keys.service';
import { requestDigest } from '../src/idempotency/idempotent-requests';
import { IdempotencyService } from '../src/idempotency/idempotency.service';
import { PetsService } from '../src/pets/pets.service';
import { AUTH, startApp, TEST_KEY, useApp } from './support/app';
import { committedDocument, ContractValidator, isUnder } from './support/openapi';

/**
 * The path prefixes each e2e spec checks against the document, read from its
 * `ContractValidator.forPaths('/...')` calls.
 */
function checkedPrefixes(): string[] {
  return readdirSync(__dirname)
    .filter((file) => file.endsWith('.e2e-spec.ts'))
    .flatMap((file) => [
      ...readFileSync(join(__dirname, file), 'utf8').matchAll(/ContractValidator\.forPaths\(([^)]*)\)/g),
    ])
    .flatMap(([, args]) => [...args.matchAll(/'([^']+)'/g)].map(([, prefix]) => prefix));
}

/**
 * Drives the live app through every operation of the pets module and every response they
 * document, and validates each status, body and header against the committed
 * openapi.yaml.
 */
describe('Every live response matches the committed OpenAPI document (e2e)', () => {
  const api = useApp();
  let contract: ContractValidator;

  beforeAll(async () => {
    // The pets module; every other module's e2e spec checks its own paths.
    contract = await ContractValidator.forPaths('/pets');
  });

  const expectContract = (res: Response, expected: string): void => {
    expect(contract.check(res)).toBe(expected);
  };

  const createPet = (body: object) => request(api.http).post('/v1/pets').set(AUTH).send(body);

  describe('createPet', () => {
    it('201 with the animal and its Location, with and without a status', async () => {
      expectContract(await createPet({ name: 'Rex', categoryId: 7, status: 'available' }), 'createPet 201');
      const plain = await createPet({ name: 'Tom', categoryId: 9007199254740991 });
      expectContract(plain, 'createPet 201');
      expect(plain.body).not.toHaveProperty('status');
    });

    it.each([
      ['a missing name', { categoryId: 1 }],
      ['an unknown property', { name: 'Rex', categoryId: 1, id: 3 }],
      ['a categoryId beyond 2^53 - 1', { name: 'Rex', categoryId: 9007199254740992 }],
    ])('400 validation_failed with details for %s', async (_label, body) => {
      const res = await createPet(body);
      expectContract(res, 'createPet 400');
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.details.length).toBeGreaterThan(0);
    });

    it('400 invalid_json for malformed JSON', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'application/json')
        .send('{"name":');
      expectContract(res, 'createPet 400');
      expect(res.body.code).toBe('invalid_json');
    });

    it('401 without a key and with a wrong one', async () => {
      expectContract(
        await request(api.http).post('/v1/pets').send({ name: 'Rex', categoryId: 1 }),
        'createPet 401',
      );
      const wrong = await request(api.http)
        .post('/v1/pets')
        .set('Authorization', 'Bearer not-the-right-key-at-all')
        .send({ name: 'Rex', categoryId: 1 });
      expectContract(wrong, 'createPet 401');
    });

    it('413 for a body over the limit', async () => {
      const res = await createPet({ name: 'x'.repeat(20000), categoryId: 1 });
      expectContract(res, 'createPet 413');
    });

    it('415 for a body that is not JSON', async () => {
      const res = await request(api.http)
        .post('/v1/pets')
        .set(AUTH)
        .set('Content-Type', 'text/plain')
        .send('name=Rex');
      expectContract(res, 'createPet 415');
    });
  });

  describe('default: what the HTTP layer refuses before any operation runs', () => {
    it.each([
      ['listPets', '/v1/pets'],
      ['getPet', '/v1/pets/1'],
    ])('%s: 415 for a body that is not JSON, even on a GET', async (operationId, path) => {
      const res = await request(api.http).get(path).set(AUTH).set('Content-Type', 'text/plain').send('x');
      expectContract(res, `${operationId} default`);
      expect(res.body.code).toBe('unsupported_media_type');
    });

    it('createPet: 431 for headers over the limit', async () => {
      const res = await createPet({ name: 'Rex', categoryId: 1 }).set('X-Padding', 'x'.repeat(20_000));
      expectContract(res, 'createPet default');
      expect(res.body.code).toBe('headers_too_large');
    });
  });

  describe('createPet with Idempotency-Key', () => {
    it('201 replayed, 409 while the first is in flight, 422 with another body', async () => {
      const body = { name: 'Retry me', categoryId: 4 };
      const first = await createPet(body).set('Idempotency-Key', 'contract-1');
      expectContract(first, 'createPet 201');
      const replay = await createPet(body).set('Idempotency-Key', 'contract-1');
      expectContract(replay, 'createPet 201');
      expect(replay.headers['idempotent-replayed']).toBe('true');

      const reused = await createPet({ ...body, name: 'Other' }).set('Idempotency-Key', 'contract-1');
      expectContract(reused, 'createPet 422');

      // A request still in flight holds its key: reserve one as such a request would.
      await api.app.get(IdempotencyService).claim(hashApiKey(TEST_KEY), 'contract-2', requestDigest(body));
      expectContract(await createPet(body).set('Idempotency-Key', 'contract-2'), 'createPet 409');
    });
  });

  describe('429 rate_limited', () => {
    const limited = useApp({ RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '1' });

    beforeAll(async () => {
      await request(limited.http).get('/v1/pets').set(AUTH); // uses the whole budget
    });

    it.each([
      ['listPets', () => request(limited.http).get('/v1/pets').set(AUTH)],
      [
        'createPet',
        () => request(limited.http).post('/v1/pets').set(AUTH).send({ name: 'Rex', categoryId: 1 }),
      ],
      ['getPet', () => request(limited.http).get('/v1/pets/1').set(AUTH)],
    ])('%s answers 429 with Retry-After', async (operationId, send) => {
      const res = await send();
      expectContract(res, `${operationId} 429`);
      expect(res.body.code).toBe('rate_limited');
    });
  });

  describe('listPets', () => {
    it('200 with and without a filter and a limit', async () => {
      await createPet({ name: 'Sold one', categoryId: 2, status: 'sold' });
      expectContract(await request(api.http).get('/v1/pets').set(AUTH), 'listPets 200');
      const filtered = await request(api.http).get('/v1/pets?status=sold&limit=1').set(AUTH);
      expectContract(filtered, 'listPets 200');
      expect(filtered.body).toHaveLength(1);
      const paged = await request(api.http).get('/v1/pets?limit=1').set(AUTH);
      expectContract(paged, 'listPets 200');
      expect(paged.headers.link).toMatch(/; rel="next"$/);
    });

    it.each(['limit=0', 'limit=101', 'limit=abc', 'status=lost'])('400 for %s', async (query) => {
      expectContract(await request(api.http).get(`/v1/pets?${query}`).set(AUTH), 'listPets 400');
    });

    it('401 without a key', async () => {
      expectContract(await request(api.http).get('/v1/pets'), 'listPets 401');
    });
  });

  describe('getPet', () => {
    it('200 with the deprecation headers', async () => {
      const created = await createPet({ name: 'Kit', categoryId: 3, status: 'pending' });
      const res = await request(api.http).get(`/v1/pets/${created.body.id}`).set(AUTH);
      expectContract(res, 'getPet 200');
      expect(res.body).toEqual(created.body);
    });

    it.each(['abc', '1.5', '99999999999999999999'])('400 for the petId %s', async (petId) => {
      expectContract(await request(api.http).get(`/v1/pets/${petId}`).set(AUTH), 'getPet 400');
    });

    it('401 without a key, still with the deprecation headers', async () => {
      expectContract(await request(api.http).get('/v1/pets/1'), 'getPet 401');
    });

    it.each(['0', '-4', '123456789'])('404 for the petId %s', async (petId) => {
      expectContract(await request(api.http).get(`/v1/pets/${petId}`).set(AUTH), 'getPet 404');
    });
  });

  describe('500 internal_error when the database fails', () => {
    let broken: NestExpressApplication;
    let brokenHttp: App;
    let typeormLog: jest.SpyInstance;

    beforeAll(async () => {
      // TypeORM logs each failed query to the console; that is expected here.
      typeormLog = jest.spyOn(console, 'log').mockImplementation(() => undefined);
      broken = await startApp();
      brokenHttp = broken.getHttpServer();
      await broken.get(DataSource).query('DROP TABLE pets');
    });

    afterAll(async () => {
      await broken.close();
      typeormLog.mockRestore();
    });

    it.each([
      ['listPets', () => request(brokenHttp).get('/v1/pets').set(AUTH)],
      [
        'createPet',
        () => request(brokenHttp).post('/v1/pets').set(AUTH).send({ name: 'Rex', categoryId: 1 }),
      ],
      ['getPet', () => request(brokenHttp).get('/v1/pets/1').set(AUTH)],
    ])('%s answers 500 in the documented shape', async (operationId, send) => {
      const res = await send();
      expectContract(res, `${operationId} 500`);
      expect(res.body).toEqual({
        code: 'internal_error',
        message: 'An unexpected error occurred.',
        status: 500,
      });
    });
  });

  describe('503 service_unavailable when the database is unavailable', () => {
    // The error node-postgres gives while the server is down. That real outages get here is
    // proven against real servers by database-outage and sqlite-disk; this checks the shape.
    const refused = () =>
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    // No outage wait: on PostgreSQL it would run the create again, after the one refusal, and succeed.
    const down = useApp({ DB_OUTAGE_WAIT_MS: '0' });

    afterEach(() => jest.restoreAllMocks());

    it.each([
      ['listPets', 'list', () => request(down.http).get('/v1/pets').set(AUTH)],
      [
        'createPet',
        'create',
        () => request(down.http).post('/v1/pets').set(AUTH).send({ name: 'Rex', categoryId: 1 }),
      ],
      ['getPet', 'get', () => request(down.http).get('/v1/pets/987654').set(AUTH)],
    ] as const)(
      '%s answers 503 with Retry-After in the documented shape',
      async (operationId, method, send) => {
        jest.spyOn(down.app.get(PetsService), method).mockRejectedValueOnce(refused());
        const res = await send();
        expectContract(res, `${operationId} 503`);
        expect(res.body).toEqual({
          code: 'service_unavailable',
          message: 'The service is temporarily unavailable.',
          status: 503,
        });
        expect(res.headers['retry-after']).toBe('2');
      },
    );
  });

  describe('the validator itself', () => {
    const fake = (method: string, path: string, status: number, headers: object, body: unknown) =>
      ({
        req: { method, path },
        status,
        headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
        body,
        text: JSON.stringify(body),
      }) as unknown as Response;
    const deprecation = {
      deprecation: '@1735689600',
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '</docs>; rel="deprecation"',
    };

    it('refuses an undocumented operation and an undocumented status', () => {
      expect(() => contract.check(fake('DELETE', '/v1/pets/1', 204, {}, ''))).toThrow(
        'not a documented operation',
      );
      expect(() => contract.check(fake('GET', '/v1/pets', 404, {}, {}))).toThrow(
        'status 404 is not documented',
      );
    });

    it('refuses a body that breaks the schema', () => {
      const body = { id: 1, name: 'Rex', categoryId: 7, status: null };
      expect(() => contract.check(fake('GET', '/v1/pets/1', 200, deprecation, body))).toThrow('body/status');
      expect(() =>
        contract.check(fake('GET', '/v1/pets', 200, {}, [{ id: '1', name: 'Rex', categoryId: 7 }])),
      ).toThrow('body/0/id must be integer');
    });

    it('refuses a missing required header and a wrong header value', () => {
      const pet = { id: 1, name: 'Rex', categoryId: 7 };
      expect(() => contract.check(fake('GET', '/v1/pets/1', 200, {}, pet))).toThrow(
        'required header Deprecation is missing',
      );
      expect(() =>
        contract.check(fake('GET', '/v1/pets/1', 200, { ...deprecation, sunset: 'tomorrow' }, pet)),
      ).toThrow('header Sunset');
      expect(() => contract.check(fake('POST', '/v1/pets', 201, { location: '/pets/1' }, pet))).toThrow(
        'header Location',
      );
    });
  });

  it("has checked every response the contract's operations document, every documented error", () => {
    // updatePet is the generated module's: test/pets.e2e-spec.ts checks every response it documents.
    expect(contract.unchecked().filter((response) => !response.startsWith('updatePet '))).toEqual([]);
  });

  it("leaves no documented operation unchecked: each other module's e2e spec checks its own paths", async () => {
    const prefixes = checkedPrefixes();
    expect(prefixes).toEqual(expect.arrayContaining(['/pets']));
    const unchecked = Object.keys((await committedDocument()).paths)
      .filter((path) => !isUnder(path, prefixes))
      .map(
        (path) =>
          `${path}: no e2e spec checks it; check the module's responses in test/<module>.e2e-spec.ts ` +
          `with ContractValidator.forPaths('/<module path>') and expect its unchecked() to be empty`,
      );
    expect(unchecked).toEqual([]);
  });
});
