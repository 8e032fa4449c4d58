/** A committed change as published: `type` is `<noun>.created|updated|deleted`, `data` the record as answered. */
export interface ChangeEvent {
  type: string;
  data: object;
}

/** Makes events of changes; the unit of work writes them in the changes' transaction, so a rollback writes none. */
export interface EventOutbox {
  readonly entity: new () => object;
  /** PostgreSQL: the advisory lock that keeps event ids visible in ascending order. */
  readonly lockName: string;
  entry(event: ChangeEvent, at: number): object;
  /** After each commit that wrote events. */
  committed(): void;
}

export const EVENT_OUTBOX = Symbol('EVENT_OUTBOX');
