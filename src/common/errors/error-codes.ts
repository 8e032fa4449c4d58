export interface ErrorSpec {
  status: number;
  message: string;
  when: string;
}

/** With the modules' declared codes, the one catalogue the filter, the OpenAPI document and docs use. */
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
  insufficient_scope: {
    status: 403,
    message: 'The API key lacks the scope this operation needs.',
    when: 'the API key lacks the scope the operation needs; `WWW-Authenticate` names it',
  },
  not_found: {
    status: 404,
    message: 'The requested resource could not be found.',
    when: 'no resource has the id, or no such route (with or without a key)',
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
  invalid_transition: {
    status: 409,
    message: 'The status cannot change that way.',
    when: "a status change the module's lifecycle table does not allow; the message names both states",
  },
  still_referenced: {
    status: 409,
    message: 'Other records still refer to this one.',
    when: 'a delete of a record that records of another module refer to',
  },
  version_limit_reached: {
    status: 409,
    message:
      'The record cannot change any more: its version is at the largest a JSON number carries exactly.',
    when: 'a change to a record whose version is already 2^53 − 1 (9007199254740991)',
  },
  precondition_failed: {
    status: 412,
    message: 'The resource has changed: If-Match does not name its current ETag.',
    when: "an update or delete whose `If-Match` does not name the resource's current `ETag`",
  },
  payload_too_large: {
    status: 413,
    message: 'The request body is larger than the limit.',
    when: 'body over 16 KiB (answered at once, and the connection closed, when `Content-Length` says so)',
  },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be sent as application/json (UTF-8).',
    when:
      'body not sent as `application/json` (a `PATCH`: `application/merge-patch+json`) in UTF-8 ' +
      '(another `charset` is refused)',
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
  precondition_required: {
    status: 428,
    message: 'Send If-Match with the ETag of the resource to change it.',
    when: 'an update without `If-Match`',
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
      'the database is unreachable, restarting, busy past its timeout or out of space, the identity ' +
      "provider cannot be reached for a token's unknown signing key, or the instance is not ready; " +
      '`Retry-After` says when to retry',
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export type ModuleErrorCode = string & { readonly declaredByAModule: true };

export type AnyErrorCode = ErrorCode | ModuleErrorCode;

const catalogue = new Map<string, ErrorSpec & { module?: string }>(Object.entries(ERROR_CODES));

/** A module's 4xx codes, declared next to the code that throws them; each belongs to one module. */
export function declareErrorCodes<const C extends Record<string, ErrorSpec>>(
  module: string,
  codes: C,
): { readonly [K in keyof C]: ModuleErrorCode } {
  for (const [code, spec] of Object.entries(codes)) {
    const taken = catalogue.get(code);
    // The same declaration read twice (a module loaded again) is not a clash.
    if (taken && !(taken.module === module && JSON.stringify({ ...spec, module }) === JSON.stringify(taken)))
      throw new Error(`error code ${code} of ${module} is taken by ${taken.module ?? 'the service'}`);
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(code))
      throw new Error(`error code ${code} of ${module} is not snake_case`);
    if (!Number.isInteger(spec.status) || spec.status < 400 || spec.status > 499)
      throw new Error(`error code ${code} of ${module}: a module's codes are 4xx`);
    catalogue.set(code, { ...spec, module });
  }
  return Object.fromEntries(Object.keys(codes).map((code) => [code, code])) as {
    [K in keyof C]: ModuleErrorCode;
  };
}

export function errorSpec(code: AnyErrorCode): ErrorSpec {
  const spec = catalogue.get(code);
  if (!spec) throw new Error(`error code ${code} is not in the catalogue`);
  return spec;
}

export function errorCodes(): AnyErrorCode[] {
  // A stable sort: within a status, codes keep the order they were declared in.
  return [...catalogue].sort(([, a], [, b]) => a.status - b.status).map(([code]) => code as AnyErrorCode);
}

/** Bounds of an error body, which the OpenAPI document states. */
export const MAX_MESSAGE_LENGTH = 4096;
export const MAX_FIELD_LENGTH = 64;
export const MAX_ERROR_DETAILS = 100;

export function codeForStatus(status: number): ErrorCode {
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find((code) => ERROR_CODES[code].status === status);
  return match ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

export function errorCatalogueTable(): string {
  const rows = errorCodes().map((code) => {
    const { status, when } = errorSpec(code);
    return `| ${status} | \`${code}\` | ${when} |`;
  });
  return ['| status | code | when |', '|---|---|---|', ...rows].join('\n');
}
