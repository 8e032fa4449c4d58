import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { PetEntity } from '../src/pets/pet.entity';
import { ResourceStores } from '../src/database/resource-store';
import { useApp } from './support/app';
import { asRaw, call, expectError, HttpReply, listenWithTimeouts } from './support/raw-http';
import { SOAK } from './support/soak';

/**
 * Property-based tests: fast-check generates requests, a reference model written here from the
 * contract and decisions.md (not from the app's validators) says what the answer must be.
 * A failure prints its seed and counterexample; FC_SEED=<seed> replays the same runs.
 */
if (process.env.FC_SEED) fc.configureGlobal({ seed: Number(process.env.FC_SEED) });
const TIMEOUT_MS = 60_000 * SOAK;

// ---- The reference model -------------------------------------------------------------------

const STATUSES = ['available', 'pending', 'sold'];
const MAX_CATEGORY_ID = 2 ** 53 - 1;
const BODY_LIMIT = 16 * 1024;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** decisions.md: 1..255 code points, not whitespace only, no U+0000–U+001F, U+007F, no lone surrogate. */
function isValidName(name: unknown): boolean {
  if (typeof name !== 'string') return false;
  const codePoints = [...name].map((character) => character.codePointAt(0)!);
  if (codePoints.length < 1 || codePoints.length > 255) return false;
  if (/^\s*$/.test(name)) return false;
  return codePoints.every((c) => c > 0x1f && c !== 0x7f && (c < 0xd800 || c > 0xdfff));
}

/** What POST /v1/pets must answer for this JSON text. */
function expectedCreate(text: string): { status: 201 } | { status: 400 | 413; code: string } {
  if (Buffer.byteLength(text) > BODY_LIMIT) return { status: 413, code: 'payload_too_large' };
  const sent = JSON.parse(text) as unknown;
  const invalid = { status: 400 as const, code: 'validation_failed' };
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) return invalid;
  const fields = sent as Record<string, unknown>;
  if (Object.keys(fields).some((key) => !['name', 'categoryId', 'status'].includes(key))) return invalid;
  if (!isValidName(fields.name)) return invalid;
  const { categoryId } = fields;
  if (typeof categoryId !== 'number' || !Number.isInteger(categoryId)) return invalid;
  if (categoryId < 1 || categoryId > MAX_CATEGORY_ID) return invalid;
  if ('status' in fields && !STATUSES.includes(fields.status as string)) return invalid;
  return { status: 201 };
}

/** A decimal integer (optional minus, digits only) within int64, else undefined. */
function decimalInt64(text: string): bigint | undefined {
  if (!/^-?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX ? value : undefined;
}

/** What GET /v1/pets?<query> must answer: the limit it applies and the status it filters by, or 400. */
function expectedList(query: string): { status: 200; limit: number; filter?: string } | { status: 400 } {
  const params = new URLSearchParams(query);
  const limits = params.getAll('limit');
  const statuses = params.getAll('status');
  let limit = 20;
  if (limits.length > 0) {
    // "an integer 1..100 written in decimal": digits only, any number of them.
    if (limits.length > 1 || !/^[0-9]+$/.test(limits[0])) return { status: 400 };
    limit = Number(limits[0]);
    if (limit < 1 || limit > 100) return { status: 400 };
  }
  if (statuses.length > 1 || (statuses.length === 1 && !STATUSES.includes(statuses[0])))
    return { status: 400 };
  return { status: 200, limit, filter: statuses[0] };
}

function isDecodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** What GET /v1/pets/<segment> must answer, given the ids that exist. */
function expectedGet(segment: string, existing: Set<number>): 200 | 400 | 404 {
  if (!isDecodable(segment)) return 400;
  const id = decimalInt64(decodeURIComponent(segment));
  if (id === undefined) return 400;
  return id >= 1n && id <= BigInt(MAX_CATEGORY_ID) && existing.has(Number(id)) ? 200 : 404;
}

// ---- Generators ----------------------------------------------------------------------------

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
const blank = fc.constantFrom(' ', '\u00a0', '\u2003', '\u3000', '\u2028', '\ufeff', '\t', '\n');

const name = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(blank, fc.constant('a')), maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.oneof(loneSurrogate, fc.constant('b')), maxLength: 4 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 250, maxLength: 260 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 250, maxLength: 260 }) },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())) },
);

const categoryId = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1_000_000 }) },
  { weight: 2, arbitrary: fc.maxSafeInteger() },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      0,
      -1,
      MAX_CATEGORY_ID,
      MAX_CATEGORY_ID - 1,
      2 ** 53,
      2 ** 53 + 2,
      1e19,
      1e308,
      -0,
    ),
  },
  { weight: 2, arbitrary: fc.double() },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.string(), fc.boolean(), fc.constant(null), fc.constant([1]), fc.constant({})),
  },
);

const status = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STATUSES) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('Sold', 'AVAILABLE', '', ' sold', 'sold ', '__proto__', 'toString'),
  },
  { weight: 1, arbitrary: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(['sold'])) },
);

const extraKeys = fc.dictionary(
  fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('id', '__proto__', 'constructor', 'Name', 'name ')),
  fc.jsonValue({ maxDepth: 2 }),
  { minKeys: 1, maxKeys: 2 },
);

/** JSON texts to POST: mostly NewPet-shaped (valid or nearly), sometimes any JSON value. */
const newPetText = fc
  .oneof(
    {
      weight: 8,
      arbitrary: fc.record({ name, categoryId, status }, { requiredKeys: ['name', 'categoryId'] }),
    },
    { weight: 2, arbitrary: fc.record({ name, categoryId, status }, { requiredKeys: [] }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.record({ name, categoryId, status }), extraKeys)
        .map(([pet, extra]) => ({ ...pet, ...extra })),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.constant({ name: 'x'.repeat(20_000), categoryId: 1 }) },
  )
  .map((value) => JSON.stringify(value) ?? 'null');

/** Characters that may appear raw in a query or path; everything else is percent-encoded. */
const SAFE = /[A-Za-z0-9\-._~!$'()*,;:@]/;
const percentEncode = (text: string) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      SAFE.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

const digits = fc
  .tuple(
    fc.constantFrom('', '', '-', '+', ' '),
    fc.nat(22),
    fc.oneof(fc.nat(150), fc.bigInt({ min: 0n, max: 2n ** 65n })),
  )
  .map(([sign, zeros, value]) => `${sign}${'0'.repeat(zeros)}${value}`);

/** Zero-padded numbers: "written in decimal" does not bound the number of digits. */
const padded = fc
  .tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 120 }))
  .map(([zeros, value]) => `${'0'.repeat(zeros)}${value}`);

/** Raw text with percent junk: bytes that may not decode, `%` without hex digits. */
const percentJunk = fc.string({
  unit: fc.constantFrom('%', '%%', '%2', '%zz', '%FF', '%E0%A4', '%00', '%2F', '+', '1', '5', 'a', '-', '.'),
  minLength: 1,
  maxLength: 6,
});

const queryValue = fc.oneof(
  { weight: 4, arbitrary: digits.map(percentEncode) },
  { weight: 2, arbitrary: padded },
  { weight: 3, arbitrary: fc.constantFrom(...STATUSES) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map(percentEncode) },
  { weight: 2, arbitrary: percentJunk },
);

const queryKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('limit', 'status') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'LIMIT',
      'limit[]',
      'status[0]',
      'li%6Dit',
      'st%61tus',
      'limit%00',
      '__proto__',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 6 }).map(percentEncode) },
);

const queryString = fc
  .array(fc.tuple(queryKey, fc.option(queryValue, { nil: undefined })), { maxLength: 4 })
  .map((pairs) => pairs.map(([key, value]) => (value === undefined ? key : `${key}=${value}`)).join('&'));

const petIdSegment = fc.oneof(
  { weight: 4, arbitrary: digits.map(percentEncode) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 12 }).map(String) },
  { weight: 2, arbitrary: padded },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }).map(percentEncode) },
  { weight: 2, arbitrary: percentJunk },
  {
    weight: 1,
    arbitrary: fc.constantFrom('.', '..', '%2e%2e', '~', '0x1', '1e3', '1.0', '١').map(percentEncode),
  },
);

// ---- Properties ----------------------------------------------------------------------------

function expectPet(value: unknown): asserts value is Record<string, unknown> & { id: number } {
  expect(value).toEqual(expect.objectContaining({ id: expect.any(Number), name: expect.any(String) }));
}

describe('Properties (e2e, fast-check)', () => {
  const api = useApp();
  let port: number;

  beforeAll(async () => {
    port = await listenWithTimeouts(api.app, 30_000);
  });

  const getJson = async (path: string): Promise<HttpReply & { json: unknown }> => {
    const reply = await call(port, 'GET', path);
    return { ...reply, json: JSON.parse(reply.body) as unknown };
  };

  describe('createPet', () => {
    // Each run starts from an empty table, so that listPets shows exactly what this run created.
    // Deleting behind the service's back, the test also drops what the service has cached.
    const emptyTable = async () => {
      await api.app.get(DataSource).createQueryBuilder().delete().from(PetEntity).execute();
      api.app.get(ResourceStores).clearCache();
    };

    it(
      'answers 201 exactly when the model says valid, and every 201 round-trips through getPet and listPets',
      async () => {
        let created = 0;
        await fc.assert(
          fc
            .asyncProperty(newPetText, async (text) => {
              const expected = expectedCreate(text);
              const reply = await call(port, 'POST', '/v1/pets', text);
              if (expected.status !== 201) {
                expectError(asRaw(reply), expected.status, expected.code);
                expect((await getJson('/v1/pets')).json).toEqual([]);
                return;
              }
              expect(reply.status).toBe(201);
              created += 1;
              const sent = JSON.parse(text) as Record<string, unknown>;
              const pet = JSON.parse(reply.body) as unknown;
              expectPet(pet);
              expect(pet).toStrictEqual({ id: pet.id, ...sent });
              expect(Object.keys(pet)).toEqual([
                'id',
                'name',
                'categoryId',
                ...('status' in sent ? ['status'] : []),
              ]);
              expect(reply.headers.location).toBe(`/v1/pets/${pet.id}`);

              expect((await getJson(`/v1/pets/${pet.id}`)).json).toStrictEqual(pet);
              expect((await getJson('/v1/pets')).json).toStrictEqual([pet]);
              for (const filter of STATUSES) {
                const listed = (await getJson(`/v1/pets?status=${filter}&limit=100`)).json;
                expect(listed).toStrictEqual(pet.status === filter ? [pet] : []);
              }
            })
            .beforeEach(emptyTable),
          { numRuns: 300 * SOAK },
        );
        // The generators must reach both sides of the model, not only the 400s.
        expect(created).toBeGreaterThan(30 * SOAK);
      },
      TIMEOUT_MS,
    );
  });

  describe('listPets and getPet with arbitrary query strings and path segments', () => {
    const existing = new Set<number>();

    beforeAll(async () => {
      await api.app.get(DataSource).createQueryBuilder().delete().from(PetEntity).execute();
      api.app.get(ResourceStores).clearCache();
      for (let index = 0; index < 30; index += 1) {
        const reply = await call(
          port,
          'POST',
          '/v1/pets',
          JSON.stringify({ name: `Pet ${index}`, categoryId: 1 + (index % 4), status: STATUSES[index % 3] }),
        );
        existing.add((JSON.parse(reply.body) as { id: number }).id);
      }
    });

    it(
      'listPets never answers 5xx: 200 with a page that obeys limit and status when the model says valid, else 400 in the Error shape',
      async () => {
        await fc.assert(
          fc.asyncProperty(queryString, async (query) => {
            const expected = expectedList(query);
            const reply = await call(port, 'GET', `/v1/pets?${query}`);
            if (expected.status === 400) {
              expectError(asRaw(reply), 400, 'validation_failed');
              return;
            }
            expect(reply.status).toBe(200);
            const pets = JSON.parse(reply.body) as Array<{ id: number; status?: string }>;
            expect(pets.length).toBe(
              Math.min(expected.limit, expected.filter ? Math.ceil(existing.size / 3) : existing.size),
            );
            const ids = pets.map((pet) => pet.id);
            expect(ids).toEqual([...ids].sort((a, b) => a - b));
            if (expected.filter) for (const pet of pets) expect(pet.status).toBe(expected.filter);
          }),
          { numRuns: 400 * SOAK },
        );
      },
      TIMEOUT_MS,
    );

    it(
      'getPet never answers 5xx: 200, 404 or 400 as the model says, errors in the Error shape',
      async () => {
        await fc.assert(
          fc.asyncProperty(petIdSegment, async (segment) => {
            const expected = expectedGet(segment, existing);
            const reply = await call(port, 'GET', `/v1/pets/${segment}`);
            expect(reply.status).toBeLessThan(500);
            if (expected === 200) {
              expect(reply.status).toBe(200);
              expectPet(JSON.parse(reply.body));
            } else {
              expectError(asRaw(reply), expected, expected === 404 ? 'not_found' : 'validation_failed');
            }
            // Express refuses a path it cannot percent-decode before any route middleware runs.
            if (isDecodable(segment)) expect(reply.headers.sunset).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
          }),
          { numRuns: 400 * SOAK },
        );
      },
      TIMEOUT_MS,
    );
  });
});
