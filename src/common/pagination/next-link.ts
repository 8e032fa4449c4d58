import type { Response } from 'express';
import { API_PREFIX } from '../resource-location';

export function setNextLink(
  res: Response,
  collection: string,
  query: Record<string, string | number | undefined>,
  cursor: string | undefined,
): void {
  if (cursor === undefined) return;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && name !== 'cursor') params.set(name, String(value));
  params.set('cursor', cursor);
  res.setHeader('Link', `</${API_PREFIX}/${collection}?${params.toString()}>; rel="next"`);
}
