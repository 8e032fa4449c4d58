/**
 * The error catalogue: every stable code with its status, default message and when it is
 * answered. The OpenAPI description is made from it; a test holds the docs' tables to it.
 */
export const ERROR_CODES = {
  validation_failed: {
    status: 400,
    message: 'The request breaks a validation rule.',
    when: 'body or parameters break a rule; `message` and `details` name each field',
  },
  invalid_json: {
    status: 400,
    message: 'The request body is not valid JSON.',
    when: 'the body is not parseable JSON, or not valid UTF-8',
  },
  bad_request: {
    status: 400,
    message: 'The request is malformed.',
    when:
      'not valid HTTP/1.1 (bad chunking, bad or conflicting `Content-Length`, malformed headers, no `Host`, ' +
      '`Host`/`Authorization`/`Content-Type` sent twice), a body that does not match its `Content-Encoding`, or `CONNECT`',
  },
  unauthorized: {
    status: 401,
    message: 'An API key is required: send Authorization: Bearer <key>.',
    when: 'missing or invalid API key',
  },
  forbidden: {
    status: 403,
    message: 'The request is not allowed.',
    when: "a guard refused an authenticated request (no operation of the contract does; a module's own guard may)",
  },
  not_found: {
    status: 404,
    message: 'The requested resource could not be found.',
    when: 'unknown animal, or no such route (with or without a key)',
  },
  method_not_allowed: {
    status: 405,
    message: 'The method is not allowed on this resource.',
    when: 'known path, unsupported method; `Allow` lists the methods',
  },
  request_timeout: {
    status: 408,
    message: 'The request was not received completely in time.',
    when: 'the request was not received completely in time (by default: headers 15 s, the whole request 30 s)',
  },
  idempotency_conflict: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed.',
    when: 'a create with the same `Idempotency-Key` is still in flight',
  },
  payload_too_large: {
    status: 413,
    message: 'The request body is larger than the limit.',
    when: 'body over 16 KiB (answered at once, and the connection closed, when `Content-Length` says so)',
  },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be sent as application/json (UTF-8).',
    when: 'body not sent as `application/json` in UTF-8 (another `charset` is refused)',
  },
  expectation_failed: {
    status: 417,
    message: 'Only the expectation 100-continue is supported.',
    when: 'an `Expect` header other than `100-continue`',
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request body.',
    when: 'the `Idempotency-Key` was used before with another body',
  },
  rate_limited: {
    status: 429,
    message: 'Too many requests: retry later.',
    when:
      'over the per-key rate limit, or too many requests without a valid key from one address; ' +
      '`Retry-After` says when to retry',
  },
  headers_too_large: {
    status: 431,
    message: 'The request line and headers are larger than the limit.',
    when: "request line and headers over Node's 16 KiB limit",
  },
  internal_error: {
    status: 500,
    message: 'An unexpected error occurred.',
    when: 'anything unexpected; the message reveals no internals',
  },
  service_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable.',
    when:
      'the database is unreachable, restarting, busy past its timeout or out of space, or the instance ' +
      'is not ready; `Retry-After` says when to retry',
  },
} as const satisfies Record<string, { status: number; message: string; when: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Bounds of an error body, which the OpenAPI document states. */
export const MAX_MESSAGE_LENGTH = 4096;
export const MAX_FIELD_LENGTH = 64;
export const MAX_ERROR_DETAILS = 100;

/** The code used for a bare HTTP status raised by the framework or the HTTP layer. */
export function codeForStatus(status: number): ErrorCode {
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find((code) => ERROR_CODES[code].status === status);
  if (match) return match;
  return status >= 500 ? 'internal_error' : 'bad_request';
}

/** The catalogue as a Markdown table (`| status | code | when |`), as the docs show it. */
export function errorCatalogueTable(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[]).map(
    (code) => `| ${ERROR_CODES[code].status} | \`${code}\` | ${ERROR_CODES[code].when} |`,
  );
  return ['| status | code | when |', '|---|---|---|', ...rows].join('\n');
}
