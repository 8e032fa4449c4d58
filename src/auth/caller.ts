import type { Scopes } from './api-keys.service';
import type { Request } from 'express';

export interface Caller {
  /** The SHA-256 hex digest of the API key, or of an access token's subject: never the secret itself. */
  readonly owner: string;
  /** A stored key's id and name; an `API_KEYS` entry has none. */
  readonly keyId?: number;
  readonly keyName?: string;
  /** An access token's `sub` and `client_id` (or `azp`). */
  readonly subject?: string;
  readonly clientId?: string;
  readonly scopes: Scopes;
  /** The handler's name: the operation's id in the OpenAPI document (`createPet`). */
  readonly operation: string;
}

const CALLER = Symbol('caller');

type WithCaller = Request & { [CALLER]?: Caller };

export function setCaller(request: Request, caller: Caller): void {
  (request as WithCaller)[CALLER] = caller;
}

export function callerOf(request: Request): Caller | undefined {
  return (request as WithCaller)[CALLER];
}
