import type { Response } from 'express';
import { ApiException, invalidField } from './errors/api-exception';
import { ETAG_HEADER, IF_MATCH_FORMAT, IF_MATCH_HEADER } from './openapi/headers';

/** A strong entity tag (RFC 9110 §8.8.3) of a row's version: equal bodies have equal versions. */
export function etagOf(row: { version: number }): string {
  return `"${row.version}"`;
}

export function setEtag<R extends { version: number }>(response: Response, row: R): R {
  response.setHeader(ETAG_HEADER, etagOf(row));
  return row;
}

/** `If-Match` by strong comparison (RFC 9110 §13.1.1): a weak `W/"..."` tag never matches. */
export function ifMatch(header: string | undefined, required: boolean): (row: { version: number }) => void {
  if (header === undefined && required)
    return () => {
      throw new ApiException('precondition_required');
    };
  // Absent and optional: any version will do, as with `*`.
  const value = header?.trim() ?? '*';
  if (value.length > 1024 || !IF_MATCH_FORMAT.test(value))
    throw invalidField(IF_MATCH_HEADER, 'If-Match must be * or a list of entity tags ("...")');
  if (value === '*') return () => undefined;
  const tags = value.split(',').map((tag) => tag.trim());
  return (row) => {
    if (!tags.includes(etagOf(row))) throw new ApiException('precondition_failed');
  };
}
