import type { EntityManager } from 'typeorm';

/** A committed change as published: `type` is `<noun>.created|updated|deleted`, `data` the record as answered. */
export interface ChangeEvent {
  type: string;
  data: object;
}

/** Writes events in the transaction of the changes they tell of: a rollback writes none. */
export interface EventOutbox {
  append(transaction: EntityManager, events: readonly ChangeEvent[]): Promise<void>;
}

export const EVENT_OUTBOX = Symbol('EVENT_OUTBOX');
