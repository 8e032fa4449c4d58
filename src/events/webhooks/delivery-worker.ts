import { parentPort, workerData } from 'node:worker_threads';
import type { AddressPolicy } from './address-policy';
import { deliver } from './deliver';
import type { Delivery } from './delivery-sender';
import type { Attempt } from './webhook-sender';

/** The delivery thread: signs and sends what the main thread hands it, and answers in batches. */
const { policy, timeoutMs } = workerData as { policy: AddressPolicy; timeoutMs: number };
const port = parentPort!;
const answers: Array<[number, Attempt]> = [];

port.on('message', (deliveries: string) => {
  for (const { job, ...delivery } of JSON.parse(deliveries) as Array<Delivery & { job: number }>)
    void deliver(delivery, policy, timeoutMs).then((answer) => {
      if (answers.push([job, answer]) === 1)
        setImmediate(() => port.postMessage(JSON.stringify(answers.splice(0))));
    });
});
