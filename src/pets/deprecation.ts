import type { NextFunction, Request, Response } from 'express';
import { deprecation } from '../common/openapi/headers';

/** getPet: deprecated since 1 January 2025, removed on 5 December 2030 (the contract's date). */
export const GET_PET_DEPRECATION = deprecation(
  new Date('2025-01-01T00:00:00Z'),
  new Date('2030-12-05T00:00:00Z'),
  '/docs',
);

/** Set before guards and pipes run, so that errors of getPet carry the headers too. */
export function deprecationHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.set(GET_PET_DEPRECATION.headers);
  next();
}
