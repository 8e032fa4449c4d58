import type { Request } from 'express';

/** Who an authenticated request speaks for, recorded once by the guard. */
export interface Caller {
  /** The SHA-256 hex digest of the request's API key: a stable id that is never the key itself. */
  readonly owner: string;
}

const CALLER = Symbol('caller');

type WithCaller = Request & { [CALLER]?: Caller };

export function setCaller(request: Request, caller: Caller): void {
  (request as WithCaller)[CALLER] = caller;
}

/** The caller the guard recorded; undefined on public routes and before authentication. */
export function callerOf(request: Request): Caller | undefined {
  return (request as WithCaller)[CALLER];
}
