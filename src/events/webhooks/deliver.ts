import type { EventEntity } from '../event.entity';
import { publishedJson } from '../event-sink';
import type { AddressPolicy } from './address-policy';
import { signatureHeaders } from './signature';
import { Attempt, send } from './webhook-sender';

/** One attempt as a sender takes it: the event as stored, where to and with which secrets. */
export type Delivery = Pick<EventEntity, 'type' | 'at' | 'data'> & {
  url: string;
  secrets: string[];
  eventId: string;
};

/** Signs the event as published and POSTs it once. */
export function deliver(
  { url, secrets, eventId, type, at, data }: Delivery,
  policy: AddressPolicy,
  timeoutMs: number,
): Promise<Attempt> {
  const body = publishedJson(eventId, type, at, data);
  const headers = signatureHeaders(secrets, eventId, Math.floor(Date.now() / 1000), body);
  return send({ url, headers, body }, { policy, timeoutMs, excerptBytes: 1024 });
}

/**
 * Where attempts run: on a thread of their own beside the API (`DeliveryThread`), or on the
 * calling thread in a worker process, which has nothing else to do and so spares the hand-over.
 */
export abstract class DeliverySender {
  abstract send(delivery: Delivery): Promise<Attempt>;
  abstract stop(): Promise<void>;
}

export class InlineSender extends DeliverySender {
  constructor(
    private readonly policy: AddressPolicy,
    private readonly timeoutMs: number,
  ) {
    super();
  }

  send(delivery: Delivery): Promise<Attempt> {
    return deliver(delivery, this.policy, this.timeoutMs);
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}
