import { DataSource, EntityManager, LessThan, MoreThan } from 'typeorm';
import { runTransaction } from '../database/resource-store';
import { EventEntity } from './event.entity';
import { OutboxPositionEntity } from './outbox-position.entity';

export const OUTBOX_BATCH = 500;

/**
 * One step of a consumer of the outbox: the events after its position, handed on `before` the
 * position moves (a sink that drops duplicates) or `within` the transaction that moves it. The
 * move is a compare-and-set: of instances that read the same events, one commits, the others roll
 * back. Events are visible in id order (events.service.ts), so a position never skips one.
 */
export async function consumeOutbox(
  connection: DataSource,
  name: string,
  handle: {
    /** Only these columns are read (a fan-out needs no `data`). */
    columns?: (keyof EventEntity)[];
    before?: (events: EventEntity[]) => Promise<void>;
    within?: (transaction: EntityManager, events: EventEntity[]) => Promise<void>;
  },
): Promise<number> {
  const positions = connection.getRepository(OutboxPositionEntity);
  const position = (await positions.findOneBy({ name }))?.position;
  if (position === undefined) {
    await positions.insert({ name, position: 0 }).catch(() => undefined); // another instance did
    return consumeOutbox(connection, name, handle);
  }
  const events = await connection.getRepository(EventEntity).find({
    ...(handle.columns ? { select: handle.columns } : {}),
    where: { id: MoreThan(position) },
    order: { id: 'ASC' },
    take: OUTBOX_BATCH,
  });
  if (events.length === 0) return 0;
  await handle.before?.(events);
  const moved = await runTransaction(connection, async (transaction) => {
    await handle.within?.(transaction, events);
    const { affected } = await transaction.update(
      OutboxPositionEntity,
      { name, position },
      { position: events[events.length - 1].id },
    );
    if (affected !== 1) throw new Overtaken();
    return events.length;
  }).catch((error: unknown) => {
    if (error instanceof Overtaken) return 0;
    throw error;
  });
  return moved;
}

class Overtaken extends Error {}

/**
 * Moves a consumer past the events made before `before` without reading them: for one that has
 * nowhere to send them (webhooks with no endpoint on). Only forward, so a step that read them
 * meanwhile loses its compare-and-set and reads on from here.
 */
export async function skipOutbox(connection: DataSource, name: string, before: number): Promise<void> {
  const raw = await connection
    .getRepository(EventEntity)
    .createQueryBuilder('event')
    .select('MAX(event.id)', 'last')
    .where('event.at < :before', { before })
    .getRawOne<{ last: string | number | null }>();
  const last = Number(raw?.last ?? 0);
  if (last > 0)
    await connection
      .getRepository(OutboxPositionEntity)
      .update({ name, position: LessThan(last) }, { position: last });
}

/**
 * Runs `step` one at a time: when woken (a commit made events, a retry fell due), at most every
 * `gapMs`, and every `idleMs` in any case, for what another instance committed or left behind.
 * Polling alone would cost every request a share of its queries; waking alone would miss those.
 */
export class Ticker {
  private timer?: NodeJS.Timeout;
  private dueAt = Infinity;
  private running?: Promise<void>;
  private again = false;
  private lastRun = 0;
  private stopped = false;

  constructor(
    private readonly step: () => Promise<void>,
    private readonly idleMs = 1000,
    private readonly gapMs = 200,
  ) {}

  start(): void {
    this.arm(0);
  }

  wake(inMs = 0): void {
    if (this.stopped) return;
    if (this.running && inMs === 0) this.again = true;
    else this.arm(Math.max(inMs, this.lastRun + this.gapMs - Date.now()));
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
    this.running = this.step();
    await this.running;
    this.running = undefined;
    this.lastRun = Date.now();
    if (!this.stopped) this.arm(this.again ? this.gapMs : this.idleMs);
  }
}
