import type { ApiHeaderOptions, HeaderObject } from '@nestjs/swagger';
import { API_PREFIX, resourceLocation } from '../resource-location';

export type ResponseHeaders = Record<string, HeaderObject>;

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** Short, and safe to log and echo. */
export const REQUEST_ID_FORMAT = /^[A-Za-z0-9._:-]{1,128}$/;

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** An sf-string (`"..."`) or a bare token of 1 to 255 visible ASCII characters. */
export const IDEMPOTENCY_KEY_FORMAT =
  /^(?:"([\x20\x21\x23-\x5b\x5d-\x7e]{1,255})"|([\x21\x23-\x5b\x5d-\x7e]{1,255}))$/;

export const ETAG_HEADER = 'ETag';
export const IF_MATCH_HEADER = 'If-Match';
export const IF_MATCH_FORMAT = /^(\*|(W\/)?"[\x21\x23-\x7e]*"( *, *(W\/)?"[\x21\x23-\x7e]*")*)$/;

export const MERGE_PATCH = 'application/merge-patch+json';

export const RATE_LIMIT_POLICY = 'default';

export const REQUEST_ID_HEADER_DOCS: ResponseHeaders = {
  [REQUEST_ID_HEADER]: {
    description:
      "The request's id, also in its log line: the client's own `X-Request-Id` when it is 1 to 128 of " +
      '`A-Z a-z 0-9 . _ : -`, else a new UUID.',
    required: true,
    schema: { type: 'string', maxLength: 128, pattern: REQUEST_ID_FORMAT.source },
  },
};

export const RATE_LIMIT_HEADER_DOCS: ResponseHeaders = {
  'RateLimit-Policy': {
    description: 'The per-key limit: `q` requests per window of `w` seconds (IETF httpapi RateLimit draft).',
    required: false,
    schema: { type: 'string', maxLength: 64, pattern: `^"${RATE_LIMIT_POLICY}";q=[0-9]+;w=[0-9]+$` },
  },
  RateLimit: {
    description: 'What is left of the limit: `r` requests, reset in `t` seconds.',
    required: false,
    schema: { type: 'string', maxLength: 64, pattern: `^"${RATE_LIMIT_POLICY}";r=[0-9]+;t=[0-9]+$` },
  },
};

export const CORS_HEADER_DOCS: ResponseHeaders = {
  'Access-Control-Allow-Origin': {
    description: "The request's `Origin`, when it is one of the deployment's `CORS_ORIGINS`.",
    required: false,
    schema: { type: 'string', format: 'uri', maxLength: 2048 },
  },
};

export const IDEMPOTENCY_KEY_HEADER_DOCS: ApiHeaderOptions = {
  name: IDEMPOTENCY_KEY_HEADER,
  required: false,
  description:
    'Makes the create safe to retry: the same key with the same body within 24 hours returns the ' +
    'original 201 (with `Idempotent-Replayed: true`) and creates nothing; with another body it is 422, ' +
    'and while the first request is still in flight 409. 1 to 255 visible ASCII characters other than ' +
    '`"` and `\\`, bare or as a quoted structured-field string (`"..."`, which may hold spaces).',
  schema: { type: 'string', minLength: 1, maxLength: 257, pattern: IDEMPOTENCY_KEY_FORMAT.source },
};

export const REPLAYED_HEADER_DOCS: ResponseHeaders = {
  [REPLAYED_HEADER]: {
    description:
      'Present, `true`, when this 201 is the stored answer to an earlier request with the same key.',
    required: false,
    schema: { type: 'string', enum: ['true'] },
  },
};

export function etagHeaderDocs(required = true): ResponseHeaders {
  return {
    [ETAG_HEADER]: {
      description:
        'The version of the resource this answer shows (strong); send it in `If-Match` to change it.' +
        (required ? '' : ' Absent on a replayed answer (`Idempotent-Replayed`): get the resource for it.'),
      required,
      schema: { type: 'string', pattern: '^"[1-9][0-9]{0,18}"$', maxLength: 21, example: '"1"' },
    },
  };
}

export function ifMatchHeaderDocs(required: boolean): ApiHeaderOptions {
  return {
    name: IF_MATCH_HEADER,
    required,
    description:
      'The `ETag` of the version the change is based on (or `*`: any). ' +
      (required
        ? 'Required: without it the answer is 428; when the resource has changed since, 412.'
        : 'Optional: when sent and the resource has changed since, the answer is 412.'),
    schema: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: IF_MATCH_FORMAT.source,
      example: '"1"',
    },
  };
}

export function locationHeaderDocs(collection: string, noun: string): ResponseHeaders {
  return {
    Location: {
      description: `The URL of the new ${noun}.`,
      required: true,
      schema: {
        type: 'string',
        maxLength: API_PREFIX.length + collection.length + 19,
        pattern: `^/${API_PREFIX}/${collection}/[1-9][0-9]{0,15}$`,
        example: resourceLocation(collection, 1),
      },
    },
  };
}

/** The headers of a deprecated operation (RFC 9745 `Deprecation`, RFC 8594 `Sunset`) and their docs. */
export function deprecation(since: Date, sunset: Date, docs: string) {
  const headers: Readonly<Record<string, string>> = {
    Deprecation: `@${Math.floor(since.getTime() / 1000)}`,
    Sunset: sunset.toUTCString(),
    Link: `<${docs}>; rel="deprecation"`,
  };
  const day = (date: Date) =>
    date.toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const descriptions = {
    Deprecation: `Deprecated since ${day(since)} (RFC 9745: \`@\` and a Unix time).`,
    Sunset: `The operation is removed on ${day(sunset)} (RFC 8594).`,
    Link: 'Where the deprecation is documented.',
  };
  const docsOf: ResponseHeaders = Object.fromEntries(
    Object.entries(descriptions).map(([name, description]) => [
      name,
      { description, required: true, schema: { type: 'string', enum: [headers[name]] } },
    ]),
  );
  return { headers, docs: docsOf, sunsetDay: day(sunset) };
}

/** The headers of each webhook delivery (Standard Webhooks), for the document's callbacks. */
export const WEBHOOK_HEADER_DOCS = [
  {
    name: 'webhook-id',
    description: 'The event id: the same on every retry of it, to deduplicate on.',
    schema: { type: 'string', pattern: '^evt_[0-9]{16}$', maxLength: 20 },
  },
  {
    name: 'webhook-timestamp',
    description: 'When this attempt was signed, in seconds since 1970: refuse one more than 5 minutes away.',
    schema: { type: 'string', pattern: '^[0-9]{1,12}$', maxLength: 12 },
  },
  {
    name: 'webhook-signature',
    description:
      '`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the ' +
      "endpoint's secret; during a rotation also under the previous one, space separated.",
    schema: {
      type: 'string',
      pattern: '^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})?$',
      maxLength: 120,
    },
  },
].map((header) => ({ ...header, in: 'header' as const, required: true }));
