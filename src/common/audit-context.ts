import type { EntityManager } from 'typeorm';

/** One change made through the API: its request, the collection (`pets`, `api-keys`), the record's id, the answer's status. */
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
