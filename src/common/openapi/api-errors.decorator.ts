import { applyDecorators } from '@nestjs/common';
import { ApiDefaultResponse, ApiResponse } from '@nestjs/swagger';
import {
  BEARER_CHALLENGE,
  EXPIRED_TOKEN_CHALLENGE,
  INVALID_TOKEN_CHALLENGE,
} from '../errors/bearer-challenge';
import { AnyErrorCode, ERROR_CODES, ErrorCode, errorSpec } from '../errors/error-codes';
import { ErrorDto } from '../errors/error.dto';
import { ResponseHeaders } from './headers';

interface ErrorResponse {
  description: string;
  code: AnyErrorCode;
  /** Real messages of the code, one example each, where it has more than its default. */
  messages?: readonly string[];
  headers?: ResponseHeaders;
}

const retryAfter = (example: string): ResponseHeaders => ({
  'Retry-After': {
    description: 'Seconds until the client may retry (delay-seconds, RFC 9110).',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$', maxLength: 10, example },
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
      'Missing, invalid, revoked or expired API key (`unauthorized`). `WWW-Authenticate` names the scheme ' +
      'and realm, with `error="invalid_token"` when a key was sent but is not valid, and the RFC 6750 ' +
      '`error_description` when it has expired.',
    code: 'unauthorized',
    messages: [ERROR_CODES.unauthorized.message, 'The API key is not valid.', 'The API key has expired.'],
    headers: {
      'WWW-Authenticate': {
        description: 'The bearer challenge (RFC 6750).',
        required: true,
        schema: {
          type: 'string',
          enum: [BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE, EXPIRED_TOKEN_CHALLENGE],
        },
      },
    },
  },
  404: { description: 'The requested resource could not be found (`not_found`).', code: 'not_found' },
  412: {
    description:
      "`If-Match` does not name the resource's current `ETag` (`precondition_failed`): it has changed " +
      'since it was read. Read it again (its `ETag` with it), then decide.',
    code: 'precondition_failed',
  },
  428: {
    description:
      'The request must be conditional (`precondition_required`): send `If-Match` with the `ETag` of the ' +
      'version the change is based on.',
    code: 'precondition_required',
  },
  409: {
    description:
      'A request with the same `Idempotency-Key` is still being processed (`idempotency_conflict`); ' +
      '`Retry-After` says when its claim ends at the latest (a few seconds, also when its instance died).',
    code: 'idempotency_conflict',
    headers: retryAfter('3'),
  },
  413: {
    description: 'The request body is larger than the limit (`payload_too_large`).',
    code: 'payload_too_large',
    messages: ['The request body is larger than the limit of 16384 bytes.'],
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
    messages: [
      'Too many requests: at most 600 per 60 seconds per API key. Retry after 42 seconds.',
      'Too many requests without a valid API key from this address. Retry after 42 seconds.',
    ],
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

/** Answered by the HTTP layer before any operation runs: documented as `default`. */
const PROTOCOL_CODES: readonly ErrorCode[] = [
  'bad_request',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
  'expectation_failed',
  'headers_too_large',
];

const examplesOf = (code: AnyErrorCode, messages: readonly string[] = [errorSpec(code).message]) =>
  messages.map((message) => ({ code, message, status: errorSpec(code).status }));

function withExamples(bodies: ReturnType<typeof examplesOf>) {
  if (bodies.length === 1) return { example: bodies[0] };
  return {
    examples: Object.fromEntries(
      bodies.map((body, index) => [index === 0 ? body.code : `${body.code}_${index + 1}`, { value: body }]),
    ),
  };
}

/** A status of ERROR_RESPONSES, a code, or a code with what the document says of it here. */
type ErrorEntry = keyof typeof ERROR_RESPONSES | AnyErrorCode | Pick<ErrorResponse, 'code' | 'description'>;

function responseOf(entry: ErrorEntry): ErrorResponse {
  if (typeof entry === 'number') return ERROR_RESPONSES[entry];
  if (typeof entry === 'object') return entry;
  const { status, when } = errorSpec(entry);
  const standard = (ERROR_RESPONSES as Record<number, ErrorResponse | undefined>)[status];
  if (standard?.code === entry) return standard;
  return { description: `${when.charAt(0).toUpperCase()}${when.slice(1)} (\`${entry}\`).`, code: entry };
}

/** Entries of one status make one response, with each one's text and example. */
export function ApiErrors(
  entries: readonly ErrorEntry[],
  options: { headers?: ResponseHeaders } = {},
): MethodDecorator {
  const byStatus = new Map<number, ErrorResponse[]>();
  for (const response of entries.map(responseOf)) {
    const { status } = errorSpec(response.code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), response]);
  }
  return applyDecorators(
    ...[...byStatus].map(([status, responses]) => {
      const headers: ResponseHeaders = {};
      for (const response of responses)
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          // Required only where every code of the status sends it (409: only idempotency_conflict).
          const senders = responses.filter((other) => other.headers?.[name] !== undefined);
          headers[name] =
            senders.length === responses.length
              ? header
              : {
                  ...header,
                  description: `${header.description} Sent with ${senders.map((sender) => `\`${sender.code}\``).join(', ')}.`,
                  required: false,
                };
        }
      Object.assign(headers, options.headers);
      return ApiResponse({
        status,
        description: responses.map((response) => response.description).join(' '),
        type: ErrorDto,
        ...withExamples(responses.flatMap((response) => examplesOf(response.code, response.messages))),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
      });
    }),
    ApiDefaultResponse({
      description:
        "Refused by the HTTP layer before the operation runs (so without the operation's own headers): " +
        PROTOCOL_CODES.map((code) => `${ERROR_CODES[code].status} \`${code}\``).join(', ') +
        '. A body, on any operation, must be JSON in UTF-8 within the size limit.',
      type: ErrorDto,
      ...withExamples(PROTOCOL_CODES.flatMap((code) => examplesOf(code))),
    }),
  );
}
