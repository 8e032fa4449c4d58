import type { Response } from 'express';
import { API_PREFIX } from '../resource-location';

/** Sets `Link: </v1/<collection>?...>; rel="next"` (RFC 8288): the same query with the next cursor. */
export function setNextLink(
  res: Response,
  collection: string,
  query: Record<string, string | number | undefined>,
  cursor: string | undefined,
): void {
  if (cursor === undefined) return;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && name !== 'cursor') params.set(name, String(value));
  }
  params.set('cursor', cursor);
  res.setHeader('Link', `</${API_PREFIX}/${collection}?${params.toString()}>; rel="next"`);
}

/** The OpenAPI description of that `Link` header; `filters` are the query parameters it keeps. */
export function nextLinkHeaderDocs(collection: string, noun: string, filters: readonly string[] = []) {
  const kept = ['limit', ...filters].map((name) => `\`${name}\``).join(' and ');
  return {
    Link: {
      description:
        `RFC 8288: \`<...>; rel="next"\` when more ${noun} match, to the next page (same ${kept}, ` +
        'and an opaque `cursor`). Absent on the last page.',
      required: false,
      schema: { type: 'string', pattern: `^</${API_PREFIX}/${collection}\\?[^>]*cursor=[^>]+>; rel="next"$` },
    },
  };
}
