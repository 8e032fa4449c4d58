import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Short, and safe to log and echo. */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

export const REQUEST_ID_HEADER_DOCS = {
  [REQUEST_ID_HEADER]: {
    description:
      "The request's id, also in its log line: the client's own `X-Request-Id` when it is 1 to 128 of " +
      '`A-Z a-z 0-9 . _ : -`, else a new UUID.',
    required: true,
    schema: { type: 'string', maxLength: 128, pattern: WELL_FORMED.source },
  },
};

export function isWellFormedRequestId(value: unknown): value is string {
  return typeof value === 'string' && WELL_FORMED.test(value);
}

/** Set on the response at once, so every answer carries it, errors included. */
export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = isWellFormedRequestId(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}
