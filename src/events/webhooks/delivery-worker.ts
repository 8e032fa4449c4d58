import { parentPort, workerData } from 'node:worker_threads';
import type { AddressPolicy } from './address-policy';
import type { Delivery } from './delivery-thread';
import { publishedJson } from '../event-sink';
import { signatureHeaders } from './signature';
import { Attempt, send } from './webhook-sender';

/** The delivery thread: signs and sends what the main thread hands it, and answers in batches. */
const { policy, timeoutMs } = workerData as { policy: AddressPolicy; timeoutMs: number };
const port = parentPort!;
const answers: Array<[number, Attempt]> = [];

port.on('message', (deliveries: string) => {
  for (const delivery of JSON.parse(deliveries) as Delivery[])
    void attempt(delivery).then((answer) => {
      if (answers.push([delivery.job, answer]) === 1)
        setImmediate(() => port.postMessage(JSON.stringify(answers.splice(0))));
    });
});

function attempt({ url, secrets, eventId, type, at, data }: Delivery): Promise<Attempt> {
  const body = publishedJson(eventId, type, at, data);
  const headers = signatureHeaders(secrets, eventId, Math.floor(Date.now() / 1000), body);
  return send({ url, headers, body }, { policy, timeoutMs, excerptBytes: 1024 });
}
