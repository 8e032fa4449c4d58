import { Logger } from '@nestjs/common';
import { DataSource, LessThan, MoreThan } from 'typeorm';
import type { Transactions } from '../database/transactions';
import type { UnitOfWork } from '../database/unit-of-work';
import { EventEntity } from './event.entity';
import { OutboxPositionEntity } from './outbox-position.entity';

export const OUTBOX_BATCH = 500;

/**
 * One step of an outbox consumer: the events after its position, handed on `before` it moves or
 * `within` the transaction that moves it by compare-and-set (of instances that read the same
 * events, one commits). Events become visible in id order, so a position never skips one.
 */
export async function consumeOutbox(
  connection: DataSource,
  transactions: Transactions,
  name: string,
  handle: {
    /** Only these columns are read (one that needs no `data` spares reading it). */
    columns?: (keyof EventEntity)[];
    before?: (events: EventEntity[]) => Promise<void>;
    within?: (work: UnitOfWork, events: EventEntity[]) => Promise<void>;
  },
): Promise<number> {
  const positions = connection.getRepository(OutboxPositionEntity);
  let position = (await positions.findOneBy({ name }))?.position;
  if (position === undefined) {
    await positions.insert({ name, position: 0 }).catch(() => undefined); // another instance did
    position = (await positions.findOneByOrFail({ name })).position;
  }
  const events = await connection.getRepository(EventEntity).find({
    ...(handle.columns ? { select: handle.columns } : {}),
    where: { id: MoreThan(position) },
    order: { id: 'ASC' },
    take: OUTBOX_BATCH,
  });
  if (events.length === 0) return 0;
  await handle.before?.(events);
  return transactions
    .run(async (work) => {
      await handle.within?.(work, events);
      const { affected } = await work.manager.update(
        OutboxPositionEntity,
        { name, position },
        { position: events[events.length - 1].id },
      );
      if (affected !== 1) throw new Overtaken();
      return events.length;
    })
    .catch((error: unknown) => {
      if (error instanceof Overtaken) return 0;
      throw error;
    });
}

class Overtaken extends Error {}

/** Moves a consumer that has nowhere to send them past the events made before `before`, unread; only forward. */
export async function skipOutbox(connection: DataSource, name: string, before: number): Promise<void> {
  const last = await connection.getRepository(EventEntity).maximum('id', { at: LessThan(before) });
  if (last)
    await connection
      .getRepository(OutboxPositionEntity)
      .update({ name, position: LessThan(last) }, { position: last });
}

const IDLE_MS = 1000;
const GAP_MS = 200;

/**
 * Runs `step` one at a time: when woken (a commit, a retry due), at most every `GAP_MS`, and every
 * `idleMs` for what other instances did. Polling alone would cost every request a share. A step
 * that fails (a database or NATS blink) is tried again at the next; `waits` is logged once per outage.
 */
export class Ticker {
  private timer?: NodeJS.Timeout;
  private dueAt = Infinity;
  private running?: Promise<void>;
  private again = false;
  private lastRun = 0;
  private stopped = false;
  private failing = false;
  private readonly logger: Logger;

  constructor(
    private readonly step: () => Promise<void>,
    context: string,
    private readonly waits: string,
    private readonly idleMs = IDLE_MS,
  ) {
    this.logger = new Logger(context);
  }

  wake(inMs = 0): void {
    if (this.stopped) return;
    if (this.running && inMs === 0) this.again = true;
    else this.arm(Math.max(inMs, this.lastRun + GAP_MS - Date.now()));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private arm(inMs: number): void {
    const at = Date.now() + Math.max(0, inMs);
    if (at >= this.dueAt) return;
    clearTimeout(this.timer);
    this.dueAt = at;
    this.timer = setTimeout(() => void this.run(), at - Date.now()).unref();
  }

  private async run(): Promise<void> {
    this.dueAt = Infinity;
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.again = false;
    this.running = this.step().then(
      () => {
        this.failing = false;
      },
      (error: unknown) => {
        if (!this.failing) this.logger.warn(`${this.waits}: ${(error as Error).message}`);
        this.failing = true;
      },
    );
    await this.running;
    this.running = undefined;
    this.lastRun = Date.now();
    if (!this.stopped) this.arm(this.again ? GAP_MS : this.idleMs);
  }
}
