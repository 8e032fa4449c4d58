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
  validation_failed: {
    description:
      'Bad request: a parameter or the body breaks a rule (`validation_failed`; `details` names each ' +
      'field and rule), the body is not valid JSON (`invalid_json`) or was not sent completely (`bad_request`).',
  },
  unauthorized: {
    description:
      'Missing, invalid, revoked or expired API key (`unauthorized`). `WWW-Authenticate` names the scheme ' +
      'and realm, with `error="invalid_token"` when a key was sent but is not valid, and the RFC 6750 ' +
      '`error_description` when it has expired.',
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
  not_found: { description: 'The requested resource could not be found (`not_found`).' },
  precondition_failed: {
    description:
      "`If-Match` does not name the resource's current `ETag` (`precondition_failed`): it has changed " +
      'since it was read. Read it again (its `ETag` with it), then decide.',
  },
  precondition_required: {
    description:
      'The request must be conditional (`precondition_required`): send `If-Match` with the `ETag` of the ' +
      'version the change is based on.',
  },
  idempotency_conflict: {
    description:
      'A request with the same `Idempotency-Key` is still being processed (`idempotency_conflict`); ' +
      '`Retry-After` says when its claim ends at the latest (a few seconds, also when its instance died).',
    headers: retryAfter('3'),
  },
  payload_too_large: {
    description: 'The request body is larger than the limit (`payload_too_large`).',
    messages: ['The request body is larger than the limit of 16384 bytes.'],
  },
  unsupported_media_type: {
    description: 'The request body is not sent as `application/json` in UTF-8 (`unsupported_media_type`).',
  },
  idempotency_key_reused: {
    description: 'The `Idempotency-Key` was already used with a different body (`idempotency_key_reused`).',
  },
  rate_limited: {
    description:
      'Over the rate limit of the API key (`rate_limited`); `Retry-After` says how many seconds to wait.',
    messages: [
      'Too many requests: at most 600 per 60 seconds per API key. Retry after 42 seconds.',
      'Too many requests without a valid API key from this address. Retry after 42 seconds.',
    ],
    headers: retryAfter('42'),
  },
  internal_error: {
    description: 'An unexpected error (`internal_error`); the message reveals no internals.',
  },
  service_unavailable: {
    description:
      'The database is unavailable for a moment (`service_unavailable`); the service recovers by itself. ' +
      'Retry after `Retry-After` seconds. A create may or may not have happened: retry it with the same ' +
      '`Idempotency-Key` to be sure it happens exactly once.',
    headers: retryAfter('2'),
  },
} as const satisfies { [C in ErrorCode]?: Omit<ErrorResponse, 'code'> };

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

/** The status of a code of ERROR_RESPONSES, a code, or a code with what the document says of it here. */
type ErrorEntry =
  | (typeof ERROR_CODES)[keyof typeof ERROR_RESPONSES]['status']
  | AnyErrorCode
  | Pick<ErrorResponse, 'code' | 'description'>;

function responseOf(entry: ErrorEntry): ErrorResponse {
  if (typeof entry === 'object') return entry;
  const code =
    typeof entry === 'string'
      ? entry
      : (Object.keys(ERROR_RESPONSES) as ErrorCode[]).find((known) => ERROR_CODES[known].status === entry)!;
  if (Object.hasOwn(ERROR_RESPONSES, code))
    return { code, ...ERROR_RESPONSES[code as keyof typeof ERROR_RESPONSES] };
  const { when } = errorSpec(code);
  return { description: `${when.charAt(0).toUpperCase()}${when.slice(1)} (\`${code}\`).`, code };
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
