import type { NextFunction, Request, Response } from 'express';
import type { ResponseHeaders } from '../common/openapi/api-errors.decorator';

/** getPet was deprecated on 1 January 2025 00:00:00 UTC (RFC 9745 `@` + Unix time). */
export const GET_PET_DEPRECATED_AT = 1735689600;
/** Removal date from the contract: 5 December 2030 (RFC 8594). */
export const GET_PET_SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';

export const DEPRECATION_HEADERS: Readonly<Record<string, string>> = {
  Deprecation: `@${GET_PET_DEPRECATED_AT}`,
  Sunset: GET_PET_SUNSET,
  Link: '</docs>; rel="deprecation"',
};

export const DEPRECATION_HEADER_DOCS: ResponseHeaders = {
  Deprecation: {
    description: 'Deprecated since 1 January 2025 00:00:00 UTC (RFC 9745: `@` and a Unix time).',
    required: true,
    schema: { type: 'string', enum: [DEPRECATION_HEADERS.Deprecation] },
  },
  Sunset: {
    description: 'The operation is removed on 5 December 2030 (RFC 8594).',
    required: true,
    schema: { type: 'string', enum: [DEPRECATION_HEADERS.Sunset] },
  },
  Link: {
    description: 'Where the deprecation is documented.',
    required: true,
    schema: { type: 'string', enum: [DEPRECATION_HEADERS.Link] },
  },
};

/** Set before guards and pipes run, so that errors of getPet carry the headers too. */
export function deprecationHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set(DEPRECATION_HEADERS);
  next();
}
