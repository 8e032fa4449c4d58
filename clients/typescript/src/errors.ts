import type { components } from './generated/schema.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorDetail = components['schemas']['ErrorDetail'];

/** An error answer of the service, in its Error shape: switch on `code`. */
export class PetStoreError extends Error {
  override readonly name = 'PetStoreError';

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** The catalogue's code; an answer without an Error body (a proxy's) gets its status's code. */
    readonly code: ErrorCode,
    message: string,
    /** For `validation_failed`: each field and the rule it broke. */
    readonly details: ErrorDetail[] | undefined,
    /** The answer's `X-Request-Id`, which its log line carries too. */
    readonly requestId: string | undefined,
    /** Seconds to wait before retrying, from `Retry-After`. */
    readonly retryAfter: number | undefined,
  ) {
    super(message);
  }

  /** Reads an error answer; `body` is what openapi-fetch parsed of it. */
  static from(response: Response, body: unknown): PetStoreError {
    const parsed = isErrorBody(body) ? body : undefined;
    const retryAfter = /^\d+$/.test(response.headers.get('Retry-After') ?? '')
      ? Number(response.headers.get('Retry-After'))
      : undefined;
    return new PetStoreError(
      response.status,
      parsed?.code ??
        (response.status >= 502 && response.status <= 504 ? 'service_unavailable' : 'internal_error'),
      parsed?.message ?? `The server answered ${response.status} without an error body.`,
      parsed?.details,
      response.headers.get('X-Request-Id') ?? undefined,
      retryAfter,
    );
  }
}

/** The request did not get an answer (refused, reset, timed out) after every attempt. */
export class PetStoreConnectionError extends Error {
  override readonly name = 'PetStoreConnectionError';

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

function isErrorBody(body: unknown): body is components['schemas']['Error'] {
  const candidate = body as { code?: unknown; message?: unknown } | null;
  return typeof candidate?.code === 'string' && typeof candidate.message === 'string';
}
