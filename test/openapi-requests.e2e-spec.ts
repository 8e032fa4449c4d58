import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AUTH, startApp } from './support/app';
import { portOf } from './support/raw-http';
import { PlainRequest, RequestValidator } from './support/request-validator';

/**
 * The document and the service agree on which requests are valid, both ways: for every request
 * below, openapi.yaml calls it valid (RequestValidator: Ajv over the document's own schemas)
 * exactly when the service answers it with something other than 400, 413 or 415. A client
 * generated from the document, or a validating proxy in front of the service, therefore never
 * sends a request the service refuses, nor refuses one it would take.
 */

interface Case extends PlainRequest {
  label: string;
}

const PET = { name: 'Rex', categoryId: 1 };
const JSON_TYPE = { 'Content-Type': 'application/json' };

const post = (label: string, body: string | Buffer, headers: Record<string, string> = JSON_TYPE): Case => ({
  label,
  method: 'POST',
  url: '/v1/pets',
  headers,
  body: Buffer.from(body),
});
const json = (label: string, value: unknown) => post(label, JSON.stringify(value));
const withName = (label: string, name: unknown) => json(`name ${label}`, { ...PET, name });
const withCategoryId = (label: string, literal: string) =>
  post(`categoryId ${label}`, `{"name":"Rex","categoryId":${literal}}`);
const withStatus = (label: string, status: unknown) => json(`status ${label}`, { ...PET, status });
const withType = (type: string | undefined, body = JSON.stringify(PET)) =>
  post(`Content-Type ${type ?? 'absent'}`, body, type === undefined ? {} : { 'Content-Type': type });
const withKey = (label: string, key: string) =>
  ({ ...json(`Idempotency-Key ${label}`, PET), headers: { ...JSON_TYPE, 'Idempotency-Key': key } }) as Case;
const get = (label: string, url: string, headers: Record<string, string> = {}, body?: string): Case => ({
  label,
  method: 'GET',
  url,
  headers,
  ...(body === undefined ? {} : { body: Buffer.from(body) }),
});
const list = (query: string) => get(`GET /v1/pets?${query}`, `/v1/pets?${query}`);
const getPet = (id: string) => get(`GET /v1/pets/${id}`, `/v1/pets/${id}`);

const CASES: Case[] = [
  json('a NewPet', PET),
  json('a NewPet with every property', { ...PET, status: 'sold' }),
  ...(
    [
      ['one character', 'R'],
      ['of 255 characters', 'x'.repeat(255)],
      ['of 256 characters', 'x'.repeat(256)],
      ['of 255 astral characters (510 UTF-16 units)', '\u{1F600}'.repeat(255)],
      ['of 256 astral characters', '\u{1F600}'.repeat(256)],
      ['empty', ''],
      ['a space', ' '],
      ['spaces around a letter', '  x  '],
      ['only a tab', '\t'],
      ['with a NUL', 'a\u0000b'],
      ['with a tab', 'a\tb'],
      ['with a line feed', 'a\nb'],
      ['with a carriage return', 'a\rb'],
      ['with DEL', 'a\u007f'],
      ['with U+0085 (a C1 control, allowed)', 'a\u0085b'],
      ['only a no-break space', '\u00a0'],
      ['only U+2028', '\u2028'],
      ['U+2028 between letters', 'a\u2028b'],
      ['only a byte order mark', '\ufeff'],
      ['only an ideographic space', '\u3000'],
      ['only a zero-width space (not whitespace)', '\u200b'],
      ['a lone high surrogate', '\ud800'],
      ['a lone low surrogate after a letter', 'a\udc00'],
      ['a surrogate pair', '\ud83d\ude00'],
      ['a combining accent', 'e\u0301'],
      ['Greek', 'Ωμέγα'],
      ['right-to-left text', 'שלום'],
      ['SQL', "Robert'); DROP TABLE pets;--"],
      ['markup', '<script>alert(1)</script>'],
      ['a backslash and a quote', '\\"'],
      ['a number', 5],
      ['null', null],
      ['true', true],
      ['an array', ['Rex']],
      ['an object', { first: 'Rex' }],
    ] as Array<[string, unknown]>
  ).map(([label, name]) => withName(label, name)),
  json('name missing', { categoryId: 1 }),
  json('categoryId missing', { name: 'Rex' }),
  ...(
    [
      ['1', '1'],
      ['0', '0'],
      ['-1', '-1'],
      ['-0', '-0'],
      ['1.5', '1.5'],
      ['1.0', '1.0'],
      ['1e0', '1e0'],
      ['2E1', '2E1'],
      ['2^53 - 1', '9007199254740991'],
      ['2^53', '9007199254740992'],
      ['1e20', '100000000000000000000'],
      ['1e300', '1e300'],
      ['a string', '"5"'],
      ['null', 'null'],
      ['true', 'true'],
      ['an array', '[1]'],
      ['an object', '{}'],
    ] as Array<[string, string]>
  ).map(([label, literal]) => withCategoryId(label, literal)),
  ...(
    [
      ['available', 'available'],
      ['pending', 'pending'],
      ['sold', 'sold'],
      ['in capitals', 'Sold'],
      ['empty', ''],
      ['unknown', 'lost'],
      ['null', null],
      ['a number', 1],
      ['an array', ['sold']],
    ] as Array<[string, unknown]>
  ).map(([label, status]) => withStatus(label, status)),
  json('an id', { ...PET, id: 3 }),
  json('an unknown property', { ...PET, color: 'brown' }),
  json('a property in other case', { ...PET, Name: 'Rex' }),
  json('a constructor property', { ...PET, constructor: 1 }),
  post('a __proto__ property', '{"__proto__":{"x":1},"name":"Rex","categoryId":1}'),
  post('a property twice (the last counts)', '{"name":"","name":"Rex","categoryId":1}'),
  post(
    'deep nesting in an unknown property',
    `{"name":"Rex","categoryId":1,"x":${'['.repeat(40)}${']'.repeat(40)}}`,
  ),
  ...['[]', 'null', '"Rex"', '1', 'true', '{}', '[{"name":"Rex","categoryId":1}]'].map((body) =>
    post(`the body ${body}`, body),
  ),
  ...[
    '{',
    '{"name":}',
    "{'name':'Rex','categoryId':1}",
    '{"name":"Rex","categoryId":1,}',
    'NaN',
    '{"name":"Rex" "categoryId":1}',
    '{"name":"Rex","categoryId":1}x',
    '{"name":"Rex","categoryId":01}',
    '{"name":"R\\x41","categoryId":1}',
  ].map((body) => post(`malformed JSON ${body}`, body)),
  post(
    'bytes that are not UTF-8',
    Buffer.concat([Buffer.from('{"name":"R'), Buffer.from([0xff]), Buffer.from('x","categoryId":1}')]),
  ),
  post('an empty body', ''),
  post('a body of exactly the limit (padded with whitespace)', JSON.stringify(PET).padEnd(16384, ' ')),
  post('a body one byte over the limit', JSON.stringify(PET).padEnd(16385, ' ')),
  json('a name over the limit', { name: 'x'.repeat(20_000), categoryId: 1 }),
  withType('application/json; charset=utf-8'),
  withType('application/json; charset=UTF-8'),
  withType('application/json; charset="utf-8"'),
  withType('application/json;charset=utf-8'),
  withType('Application/JSON'),
  withType('application/json; foo=bar'),
  withType('application/json; charset=latin1'),
  withType('application/json; charset=utf-16'),
  withType('application/json; charset=us-ascii'),
  withType('text/plain'),
  withType('text/json'),
  withType('application/merge-patch+json'),
  withType('application/problem+json'),
  withType('application/x-www-form-urlencoded', 'name=Rex&categoryId=1'),
  withType('multipart/form-data; boundary=x'),
  withType('application/xml', '<pet/>'),
  withType(undefined),
  post('a gzip body', gzipSync(JSON.stringify(PET)), { ...JSON_TYPE, 'Content-Encoding': 'gzip' }),
  post('gzip that is not gzip', JSON.stringify(PET), { ...JSON_TYPE, 'Content-Encoding': 'gzip' }),
  post('an unknown Content-Encoding', JSON.stringify(PET), { ...JSON_TYPE, 'Content-Encoding': 'compress' }),
  ...(
    [
      ['of one character', 'k'],
      ['of 255 characters', 'k'.repeat(255)],
      ['of 256 characters', 'k'.repeat(256)],
      ['quoted', '"a quoted key"'],
      ['quoted, 255 inside', `"${'k'.repeat(255)}"`],
      ['quoted, 256 inside', `"${'k'.repeat(256)}"`],
      ['quoted and empty', '""'],
      ['with a space, bare', 'two words'],
      ['with a comma', 'a,b'],
      ['with a backslash', 'a\\b'],
      ['with a quote inside', 'a"b'],
      ['a UUID', '0b0c4f1e-9a8d-4e5f-8a7b-6c5d4e3f2a1b'],
      ['with a tab inside', 'a\tb'],
      ['non-ASCII', 'caf\u00e9'],
      ['empty', ''],
    ] as Array<[string, string]>
  ).map(([label, key]) => withKey(label, key)),
  ...[
    'limit=1',
    'limit=100',
    'limit=0',
    'limit=101',
    'limit=-1',
    'limit=1.5',
    'limit=abc',
    'limit=',
    'limit=05',
    'limit=1e1',
    'limit=%2B5',
    'limit=%31%30',
    'limit=0x10',
    'limit=%205',
    'limit=5&limit=5',
    'limit=99999999999999999999',
    'limit=%',
    'limit=%E0%A4%A',
    'status=available',
    'status=pending',
    'status=sold',
    'status=SOLD',
    'status=',
    'status=%FF',
    'status=sold%00',
    'status=sold&status=sold',
    'status=sold&limit=3',
    'q=1',
    'q=%zz',
    'cursor=abc',
    'cursor=a.b.c',
    `cursor=${'a'.repeat(150)}.${'b'.repeat(60)}`,
  ].map(list),
  ...[
    '1',
    '007',
    '%31',
    '0',
    '-1',
    '9007199254740991',
    '9223372036854775807',
    '-9223372036854775808',
    '99999999999999999999',
    'abc',
    '1.5',
    '1e3',
    '0x10',
    '%2B1',
    '%201',
    '-',
    '%FF',
  ].map(getPet),
  ...[
    '2099-01-01T00:00:00Z',
    '2099-01-01T01:00:00.5+01:00',
    '2099-01-01t00:00:00.123456789z',
    '2096-02-29T00:00:00Z',
    '2099-02-29T00:00:00Z',
    '2099-04-31T00:00:00Z',
    '2099-01-01T24:00:00Z',
    '2099-06-30T23:59:60Z',
    '2099-01-01T00:00:00+01',
    '2099-01-01T00:00:00+0100',
    '2099-01-01 00:00:00Z',
    '2099-W01-1',
    '20990101T000000Z',
    '2099-01-01T00Z',
    '2099-01-01T00:00:00,5Z',
    '2099-01-01T00:00:00',
    '2099-01-01',
    '2099',
  ].flatMap((time) => [
    get(`GET /v1/audit-events?since=${time}`, `/v1/audit-events?since=${encodeURIComponent(time)}`),
    {
      ...json(`an API key expiring ${time}`, { name: 'dated', scopes: ['pets:read'], expiresAt: time }),
      url: '/v1/api-keys',
    },
  ]),
  ...[
    '{"status":null}',
    '{"status":"lost"}',
    '{"status":"pending"}',
    '{"status":null}',
    '{"name":null}',
    '{"categoryId":null}',
    '{}',
  ].map((body, index) => ({
    label: `a patch ${body} (${index})`,
    method: 'PATCH',
    url: '/v1/pets/1',
    headers: { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' },
    body: Buffer.from(body),
  })),
  get('a JSON body on a list', '/v1/pets', JSON_TYPE, '{}'),
  get('a text body on a list', '/v1/pets', { 'Content-Type': 'text/plain' }, 'x'),
  get('malformed JSON on a get', '/v1/pets/1', JSON_TYPE, '{'),
  get('an Idempotency-Key on a list (not one of its parameters)', '/v1/pets', { 'Idempotency-Key': 'a b' }),
];

/** Sends a request exactly as written, with the test key; resolves with the status. */
function send(port: number, request: PlainRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: request.method,
        path: request.url,
        headers: {
          ...AUTH,
          ...request.headers,
          ...(request.body ? { 'Content-Length': String(request.body.length) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
}

describe('The document and the service agree on valid requests (e2e)', () => {
  let app: NestExpressApplication;
  let port: number;
  let validator: RequestValidator;

  beforeAll(async () => {
    app = await startApp();
    await app.listen(0, '127.0.0.1');
    port = portOf(app);
    validator = await RequestValidator.load();
  });

  afterAll(async () => {
    await app.close();
  });

  it(`sends ${CASES.length} distinct requests, at least 150`, () => {
    expect(new Set(CASES.map((c) => c.label)).size).toBe(CASES.length);
    expect(CASES.length).toBeGreaterThanOrEqual(150);
  });

  it('the document calls a request valid exactly when the service takes it (no 400, 413 or 415)', async () => {
    const disagreements: string[] = [];
    const verdicts = { valid: 0, invalid: 0 };
    for (const request of CASES) {
      const problems = validator.problems(request);
      const status = await send(port, request);
      const refused = [400, 413, 415].includes(status);
      verdicts[problems.length === 0 ? 'valid' : 'invalid']++;
      if ((problems.length === 0) === refused) {
        disagreements.push(
          `${request.label}: the service answered ${status}, the document says ` +
            (problems.length === 0 ? 'valid' : problems.join('; ')),
        );
      }
    }
    expect(disagreements).toEqual([]);
    // Both sides of the agreement are exercised, not just one.
    expect(verdicts.valid).toBeGreaterThan(40);
    expect(verdicts.invalid).toBeGreaterThan(40);
  });
});
