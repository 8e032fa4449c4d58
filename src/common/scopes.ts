import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';

export const SCOPES_EXTENSION = 'x-required-scopes';
export const REQUIRED_SCOPE = 'petstore:required-scope';
/** What keys made before scopes, `API_KEYS` entries and the bootstrap key hold: every scope. */
export const EVERY_SCOPE = '*';
export const SCOPE_FORMAT = /^[a-z][a-z0-9-]{0,62}:(read|write|manage)$/;
/** The scopes of the service itself; each collection adds `<collection>:read` and `:write`. */
export const SERVICE_SCOPES = ['keys:manage', 'audit:read', 'events:read', 'webhooks:manage'] as const;

/** A collection's operations need `<collection>:read` to read and `<collection>:write` for the rest. */
export function collectionScope(collection: string, method: string): string {
  return `${collection}:${method === 'GET' || method === 'HEAD' ? 'read' : 'write'}`;
}

/** For operations outside that rule (`keys:manage`); stated in the document too. */
export function RequiredScope(scope: string): MethodDecorator & ClassDecorator {
  return applyDecorators(SetMetadata(REQUIRED_SCOPE, scope), ApiExtension(SCOPES_EXTENSION, [scope]));
}

/** The scopes some operation of this service asks for and the event types its changes publish. */
export interface Vocabulary {
  readonly scopes: ReadonlySet<string>;
  /** Each event type (`pet.created`) with the scope that reads its collection (`pets:read`). */
  readonly eventTypes: ReadonlyMap<string, string>;
}

export const VOCABULARY = Symbol('VOCABULARY');

/** The first of `scopes` that no operation asks for, so a typo never grants nothing silently. */
export const unknownScope = ({ scopes: known }: Vocabulary, scopes: readonly string[] = []) =>
  scopes.find((scope) => !known.has(scope));
