import { gzipSync } from 'node:zlib';
import { useApp } from './support/app';
import {
  exchange,
  expectError,
  expectNoInternals,
  httpRequest,
  listenWithTimeouts,
  postJson,
} from './support/raw-http';

/**
 * Hostile input against the running service over real sockets: each request gets the right
 * status in the Error shape with no internals in its message, and the service still answers a
 * valid request afterwards. Requests that must succeed (SQL-looking names, ignored parameters)
 * are in their own tables below.
 */

const latin1 = (text: string) => Buffer.from(text, 'latin1');
const pet = (fields: Record<string, unknown>) => JSON.stringify({ name: 'Rex', categoryId: 1, ...fields });
/** `{"name":"<bytes>","categoryId":1}` with the name's bytes exactly as given. */
const petWithNameBytes = (bytes: number[]) =>
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from(bytes), Buffer.from('","categoryId":1}')]);
const withCategoryId = (literal: string) => `{"name":"Rex","categoryId":${literal}}`;
const get = (path: string, headers: Record<string, string> = {}) => httpRequest({ path, headers });
const send = (method: string, path: string) => httpRequest({ method, path });
const withContentType = (type: string, body = pet({})) => postJson(body, { 'Content-Type': type });
const encoded = (encoding: string, body: Buffer) =>
  postJson(body, { 'Content-Encoding': encoding, 'Content-Length': String(body.length) });
/** A POST whose body is sent with `Transfer-Encoding: chunked`, `chunks` written as given. */
const chunked = (chunks: string, headers: Record<string, string> = {}) =>
  httpRequest({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', ...headers },
    body: latin1(chunks),
  });
/** A request head written by hand (for what `httpRequest` would not produce). */
const head = (lines: string[], body = '') =>
  latin1(`${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
const KEY_LINE = 'Authorization: Bearer test-key-0123456789abcdef';
/** GET /v1/pets with one more header line, written as given. */
const withHeaderLine = (...lines: string[]) => head(['GET /v1/pets HTTP/1.1', 'Host: a', KEY_LINE, ...lines]);
/** POST /v1/pets (JSON) with more header lines written as given, then `body`. */
const postWithHeaderLines = (lines: string[], body: string) =>
  head(['POST /v1/pets HTTP/1.1', 'Host: a', KEY_LINE, 'Content-Type: application/json', ...lines], body);
const nested = (levels: number, open: string, close: string, leaf = '') =>
  open.repeat(levels) + leaf + close.repeat(levels);

type Case = [label: string, request: Buffer, status: number, code: string];

/** Rows that all expect the same status and code. */
const expecting = (status: number, code: string, rows: Array<[label: string, request: Buffer]>): Case[] =>
  rows.map(([label, request]) => [label, request, status, code]);

const MALFORMED_JSON = expecting(400, 'invalid_json', [
  ['an opening brace only', postJson('{')],
  ['a closing brace only', postJson('}')],
  ['a missing value', postJson('{"name":}')],
  ['single quotes', postJson("{'name':'Rex','categoryId':1}")],
  ['unquoted keys', postJson('{name:"Rex",categoryId:1}')],
  ['a trailing comma', postJson('{"name":"Rex","categoryId":1,}')],
  ['a missing comma', postJson('{"name":"Rex" "categoryId":1}')],
  ['a trailing comma in an array', postJson('[1,]')],
  ['NaN', postJson('NaN')],
  ['Infinity', postJson('Infinity')],
  ['-Infinity', postJson('-Infinity')],
  ['undefined', postJson('undefined')],
  ['two objects in a row', postJson('{"a":1}{"b":2}')],
  ['a truncated literal', postJson('tru')],
  ['an unterminated string', postJson('"unterminated')],
  ['a truncated object', postJson('{"name":"Rex","categoryId":1')],
  ['a raw control character inside a string', postJson('{"name":"Re\u0001x","categoryId":1}')],
  ['an invalid escape', postJson('{"name":"\\x41","categoryId":1}')],
  ['a short unicode escape', postJson('{"name":"\\u12","categoryId":1}')],
  ['a hexadecimal number', postJson(withCategoryId('0x10'))],
  ['a number with a leading zero', postJson(withCategoryId('01'))],
  ['a number starting with a dot', postJson(withCategoryId('.5'))],
  ['a number ending with a dot', postJson(withCategoryId('1.'))],
  ['a number with a plus sign', postJson(withCategoryId('+1'))],
  ['a line comment', postJson('// note\n{"name":"Rex","categoryId":1}')],
  ['a block comment', postJson('/* note */{"name":"Rex","categoryId":1}')],
  ['whitespace only', postJson('   ')],
  ['a no-break space before the object', postJson('\u00a0{"name":"Rex","categoryId":1}')],
  ['10,000 unclosed arrays', postJson('['.repeat(10_000))],
  ['3,000 unclosed objects', postJson('{"a":'.repeat(3000))],
]);

const DEEP_NESTING: Case[] = [
  ['10,000 levels of arrays (20,000 bytes)', postJson(nested(10_000, '[', ']')), 413, 'payload_too_large'],
  ['10,000 levels of objects', postJson(nested(10_000, '{"a":', '}', '1')), 413, 'payload_too_large'],
  ['8,000 levels of arrays as the body', postJson(nested(8000, '[', ']')), 400, 'validation_failed'],
  [
    '8,000 levels of arrays as the name',
    postJson(`{"name":${nested(8000, '[', ']')},"categoryId":1}`),
    400,
    'validation_failed',
  ],
  [
    '2,500 levels of objects as the name',
    postJson(`{"name":${nested(2500, '{"a":', '}', '1')},"categoryId":1}`),
    400,
    'validation_failed',
  ],
  [
    '33 levels of objects as the status',
    postJson(`{"name":"Rex","categoryId":1,"status":${nested(32, '{"a":', '}', '1')}}`),
    400,
    'validation_failed',
  ],
];

const NUMBERS = expecting(400, 'validation_failed', [
  ['categoryId 1e19', postJson(withCategoryId('1e19'))],
  ['categoryId 1e308', postJson(withCategoryId('1e308'))],
  ['categoryId 1e309 (Infinity once parsed)', postJson(withCategoryId('1e309'))],
  ['categoryId -1e308', postJson(withCategoryId('-1e308'))],
  ['categoryId 2^53', postJson(withCategoryId('9007199254740992'))],
  ['categoryId 2^53 + 1 (rounds to 2^53)', postJson(withCategoryId('9007199254740993'))],
  ['categoryId 1e-400 (0 once parsed)', postJson(withCategoryId('1e-400'))],
  ['categoryId of 30 digits', postJson(withCategoryId('123456789012345678901234567890'))],
  ['categoryId of 5,000 digits', postJson(withCategoryId('9'.repeat(5000)))],
  ['categoryId 1.5', postJson(withCategoryId('1.5'))],
  ['categoryId 1e-7', postJson(withCategoryId('1e-7'))],
  ['categoryId -0', postJson(withCategoryId('-0'))],
  ['categoryId 0', postJson(withCategoryId('0'))],
  ['categoryId -1', postJson(withCategoryId('-1'))],
  ['categoryId as a string', postJson(withCategoryId('"5"'))],
  ['categoryId true', postJson(withCategoryId('true'))],
  ['categoryId null', postJson(withCategoryId('null'))],
  ['categoryId [1]', postJson(withCategoryId('[1]'))],
  ['categoryId {"$gt":0}', postJson(withCategoryId('{"$gt":0}'))],
]);

const TEXT: Case[] = [
  ['a lone high surrogate (escaped)', postJson(pet({ name: '\ud800' })), 400, 'validation_failed'],
  ['a lone low surrogate (escaped)', postJson(pet({ name: '\udc00' })), 400, 'validation_failed'],
  ['a lone surrogate inside a name', postJson(pet({ name: 'a\ud800b' })), 400, 'validation_failed'],
  ['a surrogate pair in the wrong order', postJson(pet({ name: '\udc00\ud800' })), 400, 'validation_failed'],
  ['a NUL name', postJson(pet({ name: '\u0000' })), 400, 'validation_failed'],
  ['a NUL at the end of a name', postJson(pet({ name: 'Rex\u0000' })), 400, 'validation_failed'],
  ['an ANSI escape sequence', postJson(pet({ name: '\u001b[31mred' })), 400, 'validation_failed'],
  ['DEL', postJson(pet({ name: '\u007f' })), 400, 'validation_failed'],
  ['an ideographic space only (blank)', postJson(pet({ name: '\u3000' })), 400, 'validation_failed'],
  ['an empty name', postJson(pet({ name: '' })), 400, 'validation_failed'],
  ['a name of 256 characters', postJson(pet({ name: 'a'.repeat(256) })), 400, 'validation_failed'],
  ['a name of 10,000 characters', postJson(pet({ name: 'a'.repeat(10_000) })), 400, 'validation_failed'],
  ['a NUL property name', postJson('{"\\u0000":1,"name":"Rex","categoryId":1}'), 400, 'validation_failed'],
  [
    'a surrogate encoded in UTF-8 bytes (CESU-8)',
    postJson(petWithNameBytes([0xed, 0xa0, 0x80])),
    400,
    'invalid_json',
  ],
  ['a byte 0xFF', postJson(petWithNameBytes([0x52, 0xff, 0x78])), 400, 'invalid_json'],
  ['an overlong NUL (C0 80)', postJson(petWithNameBytes([0xc0, 0x80])), 400, 'invalid_json'],
  ['a truncated UTF-8 sequence', postJson(petWithNameBytes([0xe2, 0x82])), 400, 'invalid_json'],
  ['a UTF-16 body', postJson(Buffer.from(`\ufeff${pet({})}`, 'utf16le')), 400, 'invalid_json'],
];

const NOT_AN_OBJECT: Case[] = [
  ['an empty array', postJson('[]'), 400, 'validation_failed'],
  ['an array holding a valid animal', postJson(`[${pet({})}]`), 400, 'validation_failed'],
  ['a string', postJson('"Rex"'), 400, 'validation_failed'],
  ['a number', postJson('42'), 400, 'validation_failed'],
  ['true', postJson('true'), 400, 'validation_failed'],
  ['null', postJson('null'), 400, 'validation_failed'],
  ['an empty object', postJson('{}'), 400, 'validation_failed'],
  ['an empty body', postJson(''), 400, 'validation_failed'],
  ['an empty chunked body', chunked('0\r\n\r\n'), 400, 'validation_failed'],
];

const PROTOTYPE_KEYS: Case[] = [
  [
    'a __proto__ key',
    postJson('{"__proto__":{"polluted":"yes"},"name":"Rex","categoryId":1}'),
    400,
    'validation_failed',
  ],
  [
    'a constructor.prototype key',
    postJson('{"constructor":{"prototype":{"polluted":"yes"}},"name":"Rex","categoryId":1}'),
    400,
    'validation_failed',
  ],
  [
    'a prototype key',
    postJson('{"prototype":{"polluted":"yes"},"name":"Rex","categoryId":1}'),
    400,
    'validation_failed',
  ],
  [
    '__proto__ inside the name',
    postJson('{"name":{"__proto__":{"polluted":"yes"}},"categoryId":1}'),
    400,
    'validation_failed',
  ],
  [
    '__proto__ inside categoryId',
    postJson('{"name":"Rex","categoryId":{"__proto__":{"valueOf":1}}}'),
    400,
    'validation_failed',
  ],
  [
    'a __proto__ key last',
    postJson('{"name":"Rex","categoryId":1,"__proto__":{"status":"sold"}}'),
    400,
    'validation_failed',
  ],
  ['status "__proto__"', postJson(pet({ status: '__proto__' })), 400, 'validation_failed'],
  ['status "constructor"', postJson(pet({ status: 'constructor' })), 400, 'validation_failed'],
  ['status "toString"', postJson(pet({ status: 'toString' })), 400, 'validation_failed'],
  ['an id', postJson(pet({ id: 1 })), 400, 'validation_failed'],
];

const SQL_OUTSIDE_NAMES: Case[] = [
  ['an SQL status', postJson(pet({ status: "sold' OR '1'='1" })), 400, 'validation_failed'],
  ['an SQL categoryId', postJson(withCategoryId('"1; DROP TABLE pets"')), 400, 'validation_failed'],
  ['an SQL petId', get('/v1/pets/1%20OR%201=1'), 400, 'validation_failed'],
  ['a stacked-query petId', get('/v1/pets/1;DROP%20TABLE%20pets'), 400, 'validation_failed'],
  ['an SQL status filter', get("/v1/pets?status=sold'%20OR%20'1'='1"), 400, 'validation_failed'],
  ['an SQL limit', get('/v1/pets?limit=1;DELETE%20FROM%20pets'), 400, 'validation_failed'],
];

const HEADERS: Case[] = [
  ['two Host headers', head(['GET /v1/pets HTTP/1.1', 'Host: a', 'Host: b', KEY_LINE]), 400, 'bad_request'],
  [
    'two Authorization headers (valid, then invalid)',
    get('/v1/pets', { authorization: 'Bearer someone-elses-key-0123' }),
    400,
    'bad_request',
  ],
  ['the same Authorization header twice', withHeaderLine(KEY_LINE), 400, 'bad_request'],
  ['two Content-Type headers', postJson(pet({}), { 'content-type': 'text/plain' }), 400, 'bad_request'],
  [
    'two equal Content-Length headers',
    postWithHeaderLines(['Content-Length: 2', 'Content-Length: 2'], '{}'),
    400,
    'bad_request',
  ],
  [
    'two different Content-Length headers',
    postWithHeaderLines(['Content-Length: 2', 'Content-Length: 3'], '{}'),
    400,
    'bad_request',
  ],
  [
    'Content-Length with Transfer-Encoding',
    postWithHeaderLines(['Content-Length: 5', 'Transfer-Encoding: chunked'], '0\r\n\r\n'),
    400,
    'bad_request',
  ],
  ['a header of 20,000 bytes', get('/v1/pets', { 'X-Big': 'a'.repeat(20_000) }), 431, 'headers_too_large'],
  [
    '200 headers of 100 bytes',
    get('/v1/pets', Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`X-H${i}`, 'v'.repeat(100)]))),
    431,
    'headers_too_large',
  ],
  [
    'an Authorization header of 15,000 bytes',
    get('/v1/pets', { Authorization: `Bearer ${'a'.repeat(15_000)}` }),
    401,
    'unauthorized',
  ],
  ['a header name with a space', withHeaderLine('Bad Name: x'), 400, 'bad_request'],
  ['a header line without a colon', withHeaderLine('NoColon'), 400, 'bad_request'],
  ['a folded header line', withHeaderLine('X-Folded: a', ' b'), 400, 'bad_request'],
  ['a NUL in a header value', withHeaderLine('X-Nul: a\u0000b'), 400, 'bad_request'],
  ['a bare CR in a header value', withHeaderLine('X-Cr: a\rb'), 400, 'bad_request'],
  ['no Host header in HTTP/1.1', head(['GET /v1/pets HTTP/1.1', KEY_LINE]), 400, 'bad_request'],
  [
    'a key with bytes above 0x7F',
    get('/v1/pets', { Authorization: 'Bearer \u00ff\u00fe-key-0123456789abcdef' }),
    401,
    'unauthorized',
  ],
  [
    'Bearer and 5,000 spaces',
    get('/v1/pets', { Authorization: `Bearer${' '.repeat(5000)}!` }),
    401,
    'unauthorized',
  ],
  ['an Expect other than 100-continue', get('/v1/pets', { Expect: 'teapot' }), 417, 'expectation_failed'],
];

const CONTENT_LENGTH: Case[] = [
  ['a non-numeric Content-Length', postJson(pet({}), { 'Content-Length': 'abc' }), 400, 'bad_request'],
  ['a negative Content-Length', postJson(pet({}), { 'Content-Length': '-1' }), 400, 'bad_request'],
  ['a Content-Length with a plus sign', postJson(pet({}), { 'Content-Length': '+2' }), 400, 'bad_request'],
  ['a hexadecimal Content-Length', postJson(pet({}), { 'Content-Length': '0x10' }), 400, 'bad_request'],
  [
    'a Content-Length of 20 digits',
    postJson(pet({}), { 'Content-Length': '99999999999999999999' }),
    400,
    'bad_request',
  ],
  [
    'a Content-Length over the limit, no body sent',
    postJson('', { 'Content-Length': '17000' }),
    413,
    'payload_too_large',
  ],
  [
    'a body of 17,000 bytes',
    postJson(JSON.stringify({ name: 'a'.repeat(17_000) })),
    413,
    'payload_too_large',
  ],
];

const CHUNKING: Case[] = [
  ['a chunk size that is not hexadecimal', chunked('zz\r\n{}\r\n0\r\n\r\n'), 400, 'bad_request'],
  ['a chunk without its CRLF', chunked('2\r\n{}0\r\n\r\n'), 400, 'bad_request'],
  ['a chunk size that overflows', chunked('fffffffffffffffffff\r\n{}\r\n0\r\n\r\n'), 400, 'bad_request'],
  ['a negative chunk size', chunked('-2\r\n{}\r\n0\r\n\r\n'), 400, 'bad_request'],
  [
    'a chunk extension of 20,000 bytes',
    chunked(`2;ext=${'x'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`),
    413,
    'payload_too_large',
  ],
  [
    'Transfer-Encoding chunked, gzip',
    chunked('2\r\n{}\r\n0\r\n\r\n', { 'Transfer-Encoding': 'chunked, gzip' }),
    400,
    'bad_request',
  ],
  ['Transfer-Encoding gzip', chunked('{}', { 'Transfer-Encoding': 'gzip' }), 400, 'bad_request'],
  [
    'chunks adding up to more than 16 KiB',
    chunked(`${'1000\r\n'.concat(' '.repeat(4096), '\r\n').repeat(5)}0\r\n\r\n`),
    413,
    'payload_too_large',
  ],
];

const URLS: Case[] = [
  ['a URL of 20,000 characters', get(`/v1/pets?${'a'.repeat(20_000)}`), 431, 'headers_too_large'],
  ['a path of 8,000 characters', get(`/v1/${'a'.repeat(8000)}`), 404, 'not_found'],
  ['a petId of 5,000 digits', get(`/v1/pets/${'9'.repeat(5000)}`), 400, 'validation_failed'],
  ['a limit of 10,000 digits', get(`/v1/pets?limit=${'1'.repeat(10_000)}`), 400, 'validation_failed'],
  ['a space inside the path', head(['GET /v1/pets /x HTTP/1.1', 'Host: a', KEY_LINE]), 400, 'bad_request'],
  ['a NUL byte in the path', head(['GET /v1/pets/\u0000 HTTP/1.1', 'Host: a', KEY_LINE]), 400, 'bad_request'],
  ['HTTP/1.7 in the request line', head(['GET /v1/pets HTTP/1.7', 'Host: a', KEY_LINE]), 400, 'bad_request'],
];

const PERCENT_JUNK: Case[] = [
  ['petId %', get('/v1/pets/%'), 400, 'validation_failed'],
  ['petId %zz', get('/v1/pets/%zz'), 400, 'validation_failed'],
  ['petId with a truncated escape', get('/v1/pets/%E0%A4%A'), 400, 'validation_failed'],
  ['petId %FF (not UTF-8)', get('/v1/pets/%FF'), 400, 'validation_failed'],
  ['petId %00', get('/v1/pets/%00'), 400, 'validation_failed'],
  ['petId %2e%2e', get('/v1/pets/%2e%2e'), 400, 'validation_failed'],
  ['petId ..%2F..%2Fetc%2Fpasswd', get('/v1/pets/..%2F..%2Fetc%2Fpasswd'), 400, 'validation_failed'],
  ['petId 1%2F2', get('/v1/pets/1%2F2'), 400, 'validation_failed'],
  ['petId %2B1', get('/v1/pets/%2B1'), 400, 'validation_failed'],
  ['petId %201', get('/v1/pets/%201'), 400, 'validation_failed'],
  ['petId 1e3', get('/v1/pets/1e3'), 400, 'validation_failed'],
  ['petId 0x10', get('/v1/pets/0x10'), 400, 'validation_failed'],
  ['petId 2^63', get('/v1/pets/9223372036854775808'), 400, 'validation_failed'],
  ['petId -2^63 - 1', get('/v1/pets/-9223372036854775809'), 400, 'validation_failed'],
  ['petId 2^63 - 1 (no such animal)', get('/v1/pets/9223372036854775807'), 404, 'not_found'],
  ['petId -1', get('/v1/pets/-1'), 404, 'not_found'],
  ['petId 0', get('/v1/pets/0'), 404, 'not_found'],
  ['an encoded letter in the route', get('/v1/%70ets'), 404, 'not_found'],
  ['a dot-dot segment before the prefix', get('/%2e%2e/v1/pets'), 404, 'not_found'],
  ['a trailing slash', get('/v1/pets/'), 404, 'not_found'],
  [
    'a trailing slash on a create',
    httpRequest({
      method: 'POST',
      path: '/v1/pets/',
      headers: { 'Content-Type': 'application/json' },
      body: pet({}),
    }),
    404,
    'not_found',
  ],
  ['the path in capitals', get('/V1/PETS'), 404, 'not_found'],
  ['the collection in capitals', get('/v1/Pets'), 404, 'not_found'],
  ['a probe in capitals', get('/HEALTH/LIVE'), 404, 'not_found'],
  ['a probe with a trailing slash', get('/health/live/'), 404, 'not_found'],
  ['limit %', get('/v1/pets?limit=%'), 400, 'validation_failed'],
  ['limit %zz', get('/v1/pets?limit=%zz'), 400, 'validation_failed'],
  ['limit with a truncated escape', get('/v1/pets?limit=%E0%A4%A'), 400, 'validation_failed'],
  ['limit %31%00', get('/v1/pets?limit=%31%00'), 400, 'validation_failed'],
  ['status %FF', get('/v1/pets?status=%FF'), 400, 'validation_failed'],
  ['status sold%00', get('/v1/pets?status=sold%00'), 400, 'validation_failed'],
];

const REPEATED_QUERY = expecting(400, 'validation_failed', [
  ['limit twice, equal', get('/v1/pets?limit=1&limit=1')],
  ['limit twice, different', get('/v1/pets?limit=1&limit=2')],
  ['status twice, different', get('/v1/pets?status=sold&status=pending')],
  ['status twice, equal', get('/v1/pets?status=sold&status=sold')],
  ['limit around status', get('/v1/pets?limit=5&status=sold&limit=5')],
  ['limit empty, then given', get('/v1/pets?limit=&limit=5')],
  ['limit empty', get('/v1/pets?limit=')],
  ['status empty', get('/v1/pets?status=')],
  ['limit 100 times', get(`/v1/pets?${'limit=5&'.repeat(100)}`)],
]);

const MEDIA_TYPES: Case[] = [
  ['text/plain', withContentType('text/plain'), 415, 'unsupported_media_type'],
  ['no Content-Type', httpRequest({ method: 'POST', body: pet({}) }), 415, 'unsupported_media_type'],
  [
    'a form',
    withContentType('application/x-www-form-urlencoded', 'name=Rex&categoryId=1'),
    415,
    'unsupported_media_type',
  ],
  ['multipart', withContentType('multipart/form-data; boundary=x'), 415, 'unsupported_media_type'],
  ['application/xml', withContentType('application/xml', '<pet/>'), 415, 'unsupported_media_type'],
  ['application/jsonp', withContentType('application/jsonp'), 415, 'unsupported_media_type'],
  ['text/json', withContentType('text/json'), 415, 'unsupported_media_type'],
  ['a +json media type', withContentType('application/merge-patch+json'), 415, 'unsupported_media_type'],
  ['application/problem+json', withContentType('application/problem+json'), 415, 'unsupported_media_type'],
  ['json without a type', withContentType('json'), 415, 'unsupported_media_type'],
  ['*/*', withContentType('*/*'), 415, 'unsupported_media_type'],
  ['an empty Content-Type', withContentType(''), 415, 'unsupported_media_type'],
  ['a list of types', withContentType('application/json, text/plain'), 415, 'unsupported_media_type'],
  ['charset latin1', withContentType('application/json; charset=latin1'), 415, 'unsupported_media_type'],
  ['charset utf-16', withContentType('application/json; charset=utf-16'), 415, 'unsupported_media_type'],
  ['charset utf-32', withContentType('application/json; charset=utf-32'), 415, 'unsupported_media_type'],
  ['charset us-ascii', withContentType('application/json; charset=us-ascii'), 415, 'unsupported_media_type'],
  ['an unknown charset', withContentType('application/json; charset=bogus'), 415, 'unsupported_media_type'],
  ['gzip that is not gzip', encoded('gzip', Buffer.from(pet({}))), 400, 'bad_request'],
  ['deflate that is not deflate', encoded('deflate', Buffer.from(pet({}))), 400, 'bad_request'],
  ['br that is not brotli', encoded('br', Buffer.from(pet({}))), 400, 'bad_request'],
  [
    'an unsupported Content-Encoding',
    encoded('compress', Buffer.from(pet({}))),
    415,
    'unsupported_media_type',
  ],
  [
    'a gzip bomb (1 MB inflated)',
    encoded('gzip', gzipSync(Buffer.alloc(1_000_000, 0x20))),
    413,
    'payload_too_large',
  ],
];

const METHODS_AND_PROTOCOL: Case[] = [
  ['TRACE', send('TRACE', '/v1/pets'), 405, 'method_not_allowed'],
  ['PROPFIND', send('PROPFIND', '/v1/pets'), 405, 'method_not_allowed'],
  ['DELETE an animal', send('DELETE', '/v1/pets/1'), 405, 'method_not_allowed'],
  ['PUT the collection', send('PUT', '/v1/pets'), 405, 'method_not_allowed'],
  ['PATCH the collection', send('PATCH', '/v1/pets'), 405, 'method_not_allowed'],
  ['CONNECT', head(['CONNECT example.com:443 HTTP/1.1', 'Host: example.com:443']), 400, 'bad_request'],
  ['a lower-case method', head(['get /v1/pets HTTP/1.1', 'Host: a', KEY_LINE]), 400, 'bad_request'],
  ['an unknown method', head(['FOO /v1/pets HTTP/1.1', 'Host: a', KEY_LINE]), 400, 'bad_request'],
  ['a line of garbage', latin1('HELLO\r\n\r\n'), 400, 'bad_request'],
  ['random binary bytes', Buffer.from([0x00, 0x9f, 0xff, 0x10, 0x0d, 0x0a, 0x0d, 0x0a]), 400, 'bad_request'],
  [
    'a TLS ClientHello on the plain port',
    Buffer.from('16030100a5010000a10303' + '00'.repeat(32) + '000a', 'hex'),
    400,
    'bad_request',
  ],
  [
    'malformed JSON in a GET body',
    httpRequest({ path: '/v1/pets', headers: { 'Content-Type': 'application/json' }, body: '{' }),
    400,
    'invalid_json',
  ],
];

const CASES: Case[] = [
  ...MALFORMED_JSON,
  ...DEEP_NESTING,
  ...NUMBERS,
  ...TEXT,
  ...NOT_AN_OBJECT,
  ...PROTOTYPE_KEYS,
  ...SQL_OUTSIDE_NAMES,
  ...HEADERS,
  ...CONTENT_LENGTH,
  ...CHUNKING,
  ...URLS,
  ...PERCENT_JUNK,
  ...REPEATED_QUERY,
  ...MEDIA_TYPES,
  ...METHODS_AND_PROTOCOL,
];

/** Names that look like SQL: stored and returned exactly as sent. */
const SQL_NAMES = [
  "'; DROP TABLE pets; --",
  "Robert'); DROP TABLE pets;--",
  '" OR "1"="1',
  '1); DELETE FROM pets WHERE (1=1',
  "x' UNION SELECT key_hash, 1, 1 FROM api_keys --",
  "'); PRAGMA journal_mode=DELETE; --",
  "\\'; SELECT sqlite_version(); --",
  '% OR 1=1 --',
  '_%',
  '$1',
  '?',
  ':name',
  '@p0',
  '\\\\',
  '`backtick`',
  "' || (SELECT 1) || '",
];

/** Requests that look odd but are valid: ignored parameters, encoded values, UTF-8 variants. */
const ACCEPTED: Array<[label: string, request: Buffer, status: number]> = [
  ['an unknown limit[] parameter', get('/v1/pets?limit[]=5'), 200],
  ['an unknown limit[0] parameter', get('/v1/pets?limit[0]=5'), 200],
  ['1,000 repeated unknown parameters', get(`/v1/pets?${'a=1&'.repeat(1000)}`), 200],
  [
    '__proto__, constructor and prototype parameters',
    get('/v1/pets?__proto__=x&constructor=y&prototype=z'),
    200,
  ],
  ['a __proto__[limit] parameter', get('/v1/pets?__proto__[limit]=1000'), 200],
  ['toString and hasOwnProperty parameters', get('/v1/pets?toString=1&hasOwnProperty=1'), 200],
  ['a percent-encoded status', get('/v1/pets?status=%73%6F%6C%64'), 200],
  ['a percent-encoded limit', get('/v1/pets?limit=%31%30'), 200],
  ['a query of 15,000 characters', get(`/v1/pets?q=${'x'.repeat(15_000)}`), 200],
  ['a blank line before the request', Buffer.concat([latin1('\r\n'), get('/v1/pets')]), 200],
  ['HTTP/1.0 without Host', head(['GET /v1/pets HTTP/1.0', KEY_LINE]), 200],
  // Node's parser reads these as HTTP/1.x requests; nothing about them is unsafe.
  ['a request line without a version', head(['GET /v1/pets', 'Host: a', KEY_LINE]), 200],
  ['HTTP/2.0 in a request line', head(['GET /v1/pets HTTP/2.0', 'Host: a', KEY_LINE]), 200],
  ['charset UTF-8 in capitals', withContentType('application/json; charset=UTF-8'), 201],
  ['a quoted charset', withContentType('application/json; charset="utf-8"'), 201],
  ['a UTF-8 byte order mark', postJson(Buffer.from(`\ufeff${pet({})}`, 'utf8')), 201],
  ['a real gzip body', encoded('gzip', gzipSync(Buffer.from(pet({})))), 201],
  [
    'a chunked body in three pieces',
    chunked('5\r\n{"nam\r\n9\r\ne":"Rex",\r\nf\r\n"categoryId":1}\r\n0\r\n\r\n'),
    201,
  ],
  ['a U+FFFD sent as such', postJson(pet({ name: 'Re\ufffdx' })), 201],
];

describe('Hostile input (e2e, real sockets)', () => {
  const api = useApp();
  let port: number;
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  beforeAll(async () => {
    port = await listenWithTimeouts(api.app, 2000);
  });

  /** A valid request on a fresh connection is still answered. */
  async function expectServiceAnswers(): Promise<void> {
    const { responses } = await exchange(port, get('/v1/pets?limit=1'));
    expect(responses.map((response) => response.status)).toEqual([200]);
    expect(Array.isArray(JSON.parse(responses[0].body))).toBe(true);
  }

  it(`has at least 100 cases (${CASES.length + SQL_NAMES.length + ACCEPTED.length})`, () => {
    expect(CASES.length + SQL_NAMES.length + ACCEPTED.length).toBeGreaterThanOrEqual(100);
  });

  const cases = CASES.map(([label, request, status, code]) => ({ label, request, status, code }));
  it.each(cases)('$label → $status $code', async ({ request, status, code }) => {
    const { responses, closed } = await exchange(port, request);
    expect(responses).toHaveLength(1);
    expectError(responses[0], status, code);
    expect(closed).toBe(true);
    await expectServiceAnswers();
  });

  it.each(SQL_NAMES)('the SQL-looking name %p is stored and returned verbatim', async (name) => {
    const { responses } = await exchange(port, postJson(JSON.stringify({ name, categoryId: 3 })));
    expect(responses.map((response) => response.status)).toEqual([201]);
    const created = JSON.parse(responses[0].body) as { id: number };
    expect(created).toEqual({ id: expect.any(Number), name, categoryId: 3 });
    const read = await exchange(port, get(`/v1/pets/${created.id}`));
    expect(JSON.parse(read.responses[0].body)).toEqual(created);
    await expectServiceAnswers();
  });

  const accepted = ACCEPTED.map(([label, request, status]) => ({ label, request, status }));
  it.each(accepted)('$label → $status', async ({ request, status }) => {
    const { responses } = await exchange(port, request);
    expect(responses.map((response) => response.status)).toEqual([status]);
    const body = JSON.parse(responses[0].body) as unknown;
    if (status === 200) expect(Array.isArray(body)).toBe(true);
    if (status === 201) expect(body).toMatchObject({ id: expect.any(Number), categoryId: 1 });
    await expectServiceAnswers();
  });

  it('an upload of 5 MB is refused 413 at once, and the client reads the answer', async () => {
    const body = Buffer.alloc(5_000_000, 0x20);
    const started = Date.now();
    const { responses } = await exchange(port, postJson(body), { timeoutMs: 10_000 });
    expect(responses).toHaveLength(1);
    expectError(responses[0], 413, 'payload_too_large');
    expect(Date.now() - started).toBeLessThan(2000);
    await expectServiceAnswers();
  });

  it('a Content-Length shorter than the body: the rest is refused as a request, no response is mixed', async () => {
    const { responses, closed } = await exchange(port, postJson(pet({}), { 'Content-Length': '5' }));
    expect(responses.length).toBeGreaterThanOrEqual(1);
    for (const response of responses) {
      const { code } = JSON.parse(response.body) as { code: string };
      expect(['invalid_json', 'bad_request']).toContain(code);
      expectError(response, 400, code);
    }
    expect(closed).toBe(true);
    await expectServiceAnswers();
  });

  it('a Content-Length longer than the body: 408 request_timeout once the request timeout passes', async () => {
    const started = Date.now();
    const { responses, closed } = await exchange(port, postJson(pet({}), { 'Content-Length': '500' }), {
      timeoutMs: 10_000,
    });
    expect(responses).toHaveLength(1);
    expectError(responses[0], 408, 'request_timeout');
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    await expectServiceAnswers();
  });

  it('no SQL-looking request dropped or altered the table', async () => {
    const { responses } = await exchange(port, get('/v1/pets?limit=100'));
    const names = (JSON.parse(responses[0].body) as Array<{ name: string }>).map((animal) => animal.name);
    for (const name of SQL_NAMES) expect(names).toContain(name);
  });

  it('no request polluted Object.prototype', async () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const { responses } = await exchange(port, postJson(pet({ name: 'After' })));
    expect(Object.keys(JSON.parse(responses[0].body) as object).sort()).toEqual(['categoryId', 'id', 'name']);
  });

  it('error messages name what is wrong without echoing internals', () => {
    expectNoInternals('Validation failed: categoryId must be from 1 to 9007199254740991.');
    expect(() => expectNoInternals('SyntaxError: Unexpected token } in JSON at position 1')).toThrow();
    expect(() => expectNoInternals('at Object.<anonymous> (/work/src/main.ts:3:1)')).toThrow();
    expect(() => expectNoInternals('SQLITE_BUSY: database is locked')).toThrow();
  });
});
