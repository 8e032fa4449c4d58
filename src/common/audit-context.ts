/** One change made through the API: its request, the collection (`pets`, `api-keys`), the record's id, the answer's status. */
export interface AuditedChange {
  request: object;
  resource: string;
  resourceId: number;
  outcome: number;
}

/** Makes the audit events of changes; the unit of work writes them in the changes' transaction. */
export interface AuditLog {
  readonly entity: new () => object;
  entry(change: AuditedChange, at: number): object;
}

export const AUDIT_LOG = Symbol('AUDIT_LOG');
