import { applyDecorators } from '@nestjs/common';
import { ApiOkResponse } from '@nestjs/swagger';
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

export function ApiPageResponse(
  type: new (...args: never[]) => object,
  options: { collection: string; noun: string; description: string; filters?: readonly string[] },
): MethodDecorator {
  const kept = ['limit', ...(options.filters ?? [])].map((name) => `\`${name}\``).join(' and ');
  return applyDecorators(
    ApiOkResponse({
      description: options.description,
      type: [type],
      headers: {
        Link: {
          description:
            `RFC 8288: \`<...>; rel="next"\` when more ${options.noun} match, to the next page (same ${kept}, ` +
            'and an opaque `cursor`). Absent on the last page.',
          required: false,
          schema: {
            type: 'string',
            maxLength: 512,
            pattern: `^</${API_PREFIX}/${options.collection}\\?[^>]*cursor=[^>]+>; rel="next"$`,
          },
        },
      },
    }),
  );
}
