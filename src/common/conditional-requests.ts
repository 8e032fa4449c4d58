import type { HeaderObject } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiException, validationFailed } from './errors/api-exception';

export const ETAG_HEADER = 'ETag';
export const IF_MATCH_HEADER = 'If-Match';
/** `*`, or a list of entity tags (RFC 9110 §8.8.3). */
const IF_MATCH_FORMAT = /^(\*|(W\/)?"[\x21\x23-\x7e]*"( *, *(W\/)?"[\x21\x23-\x7e]*")*)$/;

/** A strong entity tag (RFC 9110 §8.8.3) of a row's version: equal bodies have equal versions. */
export function etagOf(row: { version: number }): string {
  return `"${row.version}"`;
}

export function setEtag<R extends { version: number }>(response: Response, row: R): R {
  response.setHeader(ETAG_HEADER, etagOf(row));
  return row;
}

/**
 * Whether `If-Match` holds for a row (RFC 9110 §13.1.1): `*`, or a list naming its ETag by strong
 * comparison (a weak `W/"..."` tag never matches). Absent, it is 428 `precondition_required`
 * when `required`, else no condition; malformed, 400.
 */
export function ifMatch(
  header: string | undefined,
  required: boolean,
): (row: { version: number }) => boolean {
  if (header === undefined) {
    if (required) throw new ApiException('precondition_required');
    return () => true;
  }
  const value = header.trim();
  if (value.length > 1024 || !IF_MATCH_FORMAT.test(value))
    throw validationFailed([
      { field: IF_MATCH_HEADER, message: 'If-Match must be * or a list of entity tags ("...")' },
    ]);
  if (value === '*') return () => true;
  const tags = value.split(',').map((tag) => tag.trim());
  return (row) => tags.includes(etagOf(row));
}

/** `ETag` as answers document it; a create's is absent when it replays an `Idempotency-Key`. */
export function etagHeaderDocs(required = true): Record<string, HeaderObject> {
  return {
    [ETAG_HEADER]: {
      description:
        'The version of the resource this answer shows (strong); send it in `If-Match` to change it.' +
        (required ? '' : ' Absent on a replayed answer (`Idempotent-Replayed`): get the resource for it.'),
      required,
      schema: { type: 'string', pattern: '^"[0-9]{1,15}"$', maxLength: 17, example: '"1"' },
    },
  };
}

export function ifMatchHeaderDocs(required: boolean) {
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
