import type { EventEntity } from '../event.entity';
import type { Attempt } from './webhook-sender';

/** One attempt as a sender takes it: the event as stored, where to and with which secrets. */
export type Delivery = Pick<EventEntity, 'type' | 'at' | 'data'> & {
  url: string;
  secrets: string[];
  eventId: string;
};

/**
 * Where attempts run: on a thread of their own beside the API (`DeliveryThread`), or on the
 * calling thread in a worker process (`InlineSender`), which has nothing else to do and so
 * spares the hand-over. Only the one that sends loads the HTTP client (about 18 MB of RSS).
 */
export abstract class DeliverySender {
  abstract send(delivery: Delivery): Promise<Attempt>;
  abstract stop(): Promise<void>;
}
