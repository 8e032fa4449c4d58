import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from '../common/errors/bearer-challenge';
import { MAX_EXACT_INTEGER } from '../common/validation/int64';
import { errorCatalogueTable } from '../common/errors/error-codes';
import { HttpConfig } from '../config/app-config';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../common/pagination/page-query';

/** The `info.description` of the OpenAPI document (Markdown): what holds for every operation. */
export function apiDescription(http: Pick<HttpConfig, 'bodyLimitBytes'>): string {
  return `The pet store catalogue. Each tag below is one collection of resources, at a path relative
to a server URL that ends in the version segment \`/v1\`.

## Authentication
Every operation needs an API key, sent as a bearer token: \`Authorization: Bearer <API key>\`
(the scheme name is case-insensitive). A missing or invalid key is answered \`401\` with
\`WWW-Authenticate: ${BEARER_CHALLENGE}\`, or \`${INVALID_TOKEN_CHALLENGE}\` when a key was sent
but is not valid. Authentication comes before validation, but a body that is not JSON, not
valid JSON or too large is refused before the key is checked.

## Errors
Every error is \`application/json\` with the body \`{ "code", "message", "status" }\` (the
\`Error\` schema); \`status\` equals the HTTP status. Validation errors add
\`details: [{ "field", "message" }]\`. Messages never reveal internals.

${errorCatalogueTable()}

## Limits
- \`limit\` of every list: 1 to ${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}; items come in
  ascending id order.
- Request bodies: JSON in UTF-8, at most ${http.bodyLimitBytes / 1024} KiB.
- Text properties (\`name\`, ...): 1 up to their \`maxLength\` characters (Unicode code points),
  not blank, no control characters; stored exactly as sent.
- Ids (and references to them): integers (\`int64\`) from 1 to ${MAX_EXACT_INTEGER} (2^53 - 1, the
  largest integer every JSON client reads exactly).
- Rate limits: each API key may send a number of requests per minute that the deployment sets
  (600 by default). Every response carries \`RateLimit-Policy: "default";q=<limit>;w=60\` and
  \`RateLimit: "default";r=<remaining>;t=<seconds to reset>\` (IETF httpapi draft); over the
  limit the answer is \`429\` with \`Retry-After\`.
- Requests without a valid key (none, malformed, unknown or revoked) are also limited, per
  client address (30 a minute by default): beyond that they are answered \`429\` with
  \`Retry-After\` instead of \`401\`, while requests with a valid key from the same address
  are not affected.

## Retrying creates
Every create (\`POST\` on a collection) accepts an optional \`Idempotency-Key\` header (IETF
httpapi draft): the same key from the same API key with the same body within 24 hours returns the
original \`201\` (same id, same body, \`Idempotent-Replayed: true\`) and creates nothing.

## Changing and removing
Where a collection has them, \`PATCH\` changes a resource with a JSON merge patch (RFC 7396,
\`application/merge-patch+json\`) and \`DELETE\` removes it (\`204\`). Its answers carry an
\`ETag\`; a \`PATCH\` must send it back in \`If-Match\` (\`428\` without, \`412\` when the
resource has changed since), a \`DELETE\` may. Once a change is answered, the instance that
answered it never returns an older version; other instances stop within a second (usually
milliseconds).

## When the database is unavailable
While the database is unreachable, restarting or out of space, operations answer \`503
service_unavailable\` with \`Retry-After\` (seconds), never \`500\`, and the service recovers by
itself within seconds of the database's return. Reads are safe to retry. A create answered
\`503\` may or may not have been stored: retry it with the same \`Idempotency-Key\` (send one with
every create you may retry) and it is stored exactly once; right after an outage such a retry may
get \`409 idempotency_conflict\` for a moment, and is retried the same way.

## Deprecation
A deprecated operation is marked \`deprecated\` here and keeps working until its sunset date.
Every response of it carries \`Deprecation\`, \`Sunset\` (the date) and \`Link\` (the
replacement); its tag's description says more.`;
}
