import { publishedJson } from '../event-sink';
import type { AddressPolicy } from './address-policy';
import { Delivery, DeliverySender } from './delivery-sender';
import { signatureHeaders } from './signature';
import { Attempt, send } from './webhook-sender';

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

/** A worker process's sender: each attempt on the calling thread. */
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
