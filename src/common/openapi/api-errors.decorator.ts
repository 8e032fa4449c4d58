import { applyDecorators } from '@nestjs/common';
import { ApiResponse, HeaderObject } from '@nestjs/swagger';
import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from '../errors/bearer-challenge';
import { ERROR_CODES, ErrorCode } from '../errors/error-codes';
import { ErrorDto } from '../errors/error.dto';

export type ResponseHeaders = Record<string, HeaderObject>;

interface ErrorResponse {
  description: string;
  /** The code of the example shown with the response. */
  code: ErrorCode;
  headers?: ResponseHeaders;
}

const retryAfter = (example: string): ResponseHeaders => ({
  'Retry-After': {
    description: 'Seconds until the client may retry (delay-seconds, RFC 9110).',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$', example },
  },
});

/** The error responses an operation can document (405 belongs to none: the description explains it). */
const ERROR_RESPONSES = {
  400: {
    description:
      'Bad request: a parameter or the body breaks a rule (`validation_failed`; `details` names each ' +
      'field and rule), the body is not valid JSON (`invalid_json`) or was not sent completely (`bad_request`).',
    code: 'validation_failed',
  },
  401: {
    description:
      'Missing or invalid API key (`unauthorized`). `WWW-Authenticate` names the scheme and realm, ' +
      'with `error="invalid_token"` when a key was sent but is not valid.',
    code: 'unauthorized',
    headers: {
      'WWW-Authenticate': {
        description: 'The bearer challenge (RFC 6750).',
        required: true,
        schema: { type: 'string', enum: [BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE] },
      },
    },
  },
  404: { description: 'The requested resource could not be found (`not_found`).', code: 'not_found' },
  409: {
    description:
      'A request with the same `Idempotency-Key` is still being processed (`idempotency_conflict`).',
    code: 'idempotency_conflict',
  },
  413: {
    description: 'The request body is larger than the limit (`payload_too_large`).',
    code: 'payload_too_large',
  },
  415: {
    description: 'The request body is not sent as `application/json` in UTF-8 (`unsupported_media_type`).',
    code: 'unsupported_media_type',
  },
  422: {
    description: 'The `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).',
    code: 'idempotency_key_reused',
  },
  429: {
    description:
      'Over the rate limit of the API key (`rate_limited`); `Retry-After` says how many seconds to wait.',
    code: 'rate_limited',
    headers: retryAfter('42'),
  },
  500: {
    description: 'An unexpected error (`internal_error`); the message reveals no internals.',
    code: 'internal_error',
  },
  503: {
    description:
      'The database is unavailable for a moment (`service_unavailable`); the service recovers by itself. ' +
      'Retry after `Retry-After` seconds. A create may or may not have happened: retry it with the same ' +
      '`Idempotency-Key` to be sure it happens exactly once.',
    code: 'service_unavailable',
    headers: retryAfter('2'),
  },
} as const satisfies Record<number, ErrorResponse>;

export type DocumentedErrorStatus = keyof typeof ERROR_RESPONSES;

export interface ApiErrorsOptions {
  /** Headers every one of these responses carries, besides the status's own. */
  headers?: ResponseHeaders;
}

/** Documents an operation's error responses, each with the `Error` body, an example and its headers. */
export function ApiErrors(
  statuses: readonly DocumentedErrorStatus[],
  options: ApiErrorsOptions = {},
): MethodDecorator {
  return applyDecorators(
    ...statuses.map((status) => {
      const response: ErrorResponse = ERROR_RESPONSES[status];
      const headers = { ...response.headers, ...options.headers };
      return ApiResponse({
        status,
        description: response.description,
        type: ErrorDto,
        example: { code: response.code, message: ERROR_CODES[response.code].message, status },
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
      });
    }),
  );
}
