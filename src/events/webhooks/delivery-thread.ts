import { Worker } from 'node:worker_threads';
import type { AddressPolicy } from './address-policy';
import { Delivery, DeliverySender } from './delivery-sender';
import type { Attempt } from './webhook-sender';

/** Signing and HTTP on a worker thread, started with the first delivery (architecture.md: why). */
export class DeliveryThread extends DeliverySender {
  private worker?: Worker;
  private jobs = 0;
  private readonly waiting = new Map<number, (attempt: Attempt) => void>();
  private outgoing: Array<Delivery & { job: number }> = [];

  constructor(
    private readonly policy: AddressPolicy,
    private readonly timeoutMs: number,
  ) {
    super();
  }

  send(delivery: Delivery): Promise<Attempt> {
    const job = ++this.jobs;
    if (this.outgoing.push({ ...delivery, job }) === 1)
      // As JSON text: cloning a string costs the API's thread less than cloning objects.
      setImmediate(() => this.started().postMessage(JSON.stringify(this.outgoing.splice(0))));
    return new Promise((resolve) => this.waiting.set(job, resolve));
  }

  async stop(): Promise<void> {
    await this.worker?.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    // Under ts-jest the sources are .ts: the thread compiles them as it loads them.
    const typescript = __filename.endsWith('.ts');
    const { allowHttp, allowPrivateNetworks } = this.policy;
    const worker = new Worker(`${__dirname}/delivery-worker${typescript ? '.ts' : '.js'}`, {
      workerData: { policy: { allowHttp, allowPrivateNetworks }, timeoutMs: this.timeoutMs },
      execArgv: typescript ? ['--require', 'ts-node/register/transpile-only'] : [],
      // V8's default young generation for a thread: peak RSS 208 instead of 184 MB in `npm run bench -- --webhook`.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    worker.unref();
    worker.on('message', (answers: string) => {
      for (const [job, attempt] of JSON.parse(answers) as Array<[number, Attempt]>) this.answer(job, attempt);
    });
    // A thread that dies fails what it held (retried on the schedule); the next delivery starts another.
    const lost = (error: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const job of [...this.waiting.keys()])
        this.answer(job, { ok: false, error, excerpt: '', durationMs: 0 });
    };
    worker.on('error', (error) => lost(`the delivery thread failed: ${error.message}`));
    worker.on('exit', () => lost('the delivery thread stopped'));
    return (this.worker = worker);
  }

  private answer(job: number, attempt: Attempt): void {
    this.waiting.get(job)?.(attempt);
    this.waiting.delete(job);
  }
}
