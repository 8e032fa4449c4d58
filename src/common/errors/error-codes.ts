/**
 * The stable error codes of the API (decisions.md, "Errors"): each with its HTTP status and
 * the message a client sees when nothing more specific is said.
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, message: 'The request breaks a validation rule.' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  bad_request: { status: 400, message: 'The request is malformed.' },
  unauthorized: { status: 401, message: 'A valid API key is required: send Authorization: Bearer <key>.' },
  forbidden: { status: 403, message: 'The request is not allowed.' },
  not_found: { status: 404, message: 'The requested resource could not be found.' },
  method_not_allowed: { status: 405, message: 'The method is not allowed on this resource.' },
  idempotency_conflict: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed.',
  },
  request_timeout: { status: 408, message: 'The request was not received completely in time.' },
  payload_too_large: { status: 413, message: 'The request body is larger than the limit.' },
  unsupported_media_type: {
    status: 415,
    message: 'The request body must be sent as application/json (UTF-8).',
  },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request body.',
  },
  expectation_failed: { status: 417, message: 'Only the expectation 100-continue is supported.' },
  rate_limited: { status: 429, message: 'Too many requests: retry later.' },
  headers_too_large: { status: 431, message: 'The request line and headers are larger than the limit.' },
  internal_error: { status: 500, message: 'An unexpected error occurred.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unavailable.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The code used for a bare HTTP status raised by the framework or the HTTP layer. */
export function codeForStatus(status: number): ErrorCode {
  const match = (Object.keys(ERROR_CODES) as ErrorCode[]).find((code) => ERROR_CODES[code].status === status);
  if (match) return match;
  return status >= 500 ? 'internal_error' : 'bad_request';
}
