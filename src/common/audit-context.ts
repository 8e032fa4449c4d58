import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from 'typeorm';

/** The request a change is made for, where one is: only changes made through the API are audited. */
const changing = new AsyncLocalStorage<{ request?: object }>();

/**
 * Runs `next` (the rest of a request that may change something) with its request at hand, until
 * it is answered: what is made meanwhile (a pooled connection, a timer) keeps the context, not the request.
 */
export function auditing(
  request: object,
  response: { once(event: 'close', done: () => void): unknown },
  next: () => void,
): void {
  const context: { request?: object } = { request };
  response.once('close', () => (context.request = undefined));
  changing.run(context, next);
}

export const auditedRequest = (): object | undefined => changing.getStore()?.request;

/** One change: the table's resource (`pets`, `api-keys`), the record's id, the answer's status. */
export interface AuditedChange {
  request: object;
  resource: string;
  resourceId: number;
  outcome: number;
}

/** Writes audit events in the transaction of the changes they record. */
export interface AuditLog {
  record(transaction: EntityManager, changes: readonly AuditedChange[]): Promise<void>;
}

export const AUDIT_LOG = Symbol('AUDIT_LOG');
