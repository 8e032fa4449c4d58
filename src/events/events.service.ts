import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ChangeEvent, EventOutbox } from '../common/event-outbox';
import { invalidField } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
import { Connections } from '../database/connections';
import { DAY_MS, pruneBefore, pruneHourly } from '../database/retention';
import { EventEntity } from './event.entity';

export const EVENTS_OPTIONS = Symbol('EVENTS_OPTIONS');

/** `evt_` and 16 digits: ids sort as text as they do as numbers. */
export const EVENT_ID_FORMAT = /^evt_(\d{16})$/;
export const eventId = (id: number): string => `evt_${String(id).padStart(16, '0')}`;

/** `pet.created`, `pet.*` or `*`. */
export const EVENT_TYPE_PATTERN = /^(\*|[a-z][a-z0-9-]{0,62}\.(\*|created|updated|deleted))$/;

export function matchesType(pattern: string, type: string): boolean {
  return (
    pattern === '*' || pattern === type || (pattern.endsWith('.*') && type.startsWith(pattern.slice(0, -1)))
  );
}

/** The outbox: events written in their change's transaction, read back as the feed, pruned after the retention. */
@Injectable()
export class EventsService implements EventOutbox, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  private stopPruning?: () => void;
  readonly entity = EventEntity;
  readonly lockName = 'petstore_events';

  constructor(
    @InjectRepository(EventEntity) private readonly events: Repository<EventEntity>,
    @Inject(EVENTS_OPTIONS) private readonly options: { retentionDays: number },
  ) {}

  private readonly listeners: Array<() => void> = [];
  private readonly alsoPruned: Array<(before: number) => Promise<unknown>> = [];

  /** What a consumer keeps of events (deliveries) goes with them: `prune` removes what is older than `before`. */
  alsoPrune(prune: (before: number) => Promise<unknown>): void {
    this.alsoPruned.push(prune);
  }

  entry({ type, data }: ChangeEvent, at: number): Omit<EventEntity, 'id'> {
    return { type, at, data: JSON.stringify(data) };
  }

  /** `listener` runs after each commit that wrote events here (another instance's are polled for). */
  onCommitted(listener: () => void): void {
    this.listeners.push(listener);
  }

  committed(): void {
    this.listeners.forEach((listener) => listener());
  }

  list(query: { type?: string; after?: string; limit: number; cursor?: string }): Promise<Page<EventEntity>> {
    const { type, after, limit, cursor } = query;
    const from = after === undefined ? undefined : EVENT_ID_FORMAT.exec(after);
    if (from === null) throw invalidField('after', 'after must be an event id like evt_0000000000000001');
    const where =
      type === undefined || type === '*'
        ? []
        : type.endsWith('.*')
          ? [['type', 'LIKE', `${type.slice(0, -1)}%`] as const]
          : [['type', type] as const];
    return Connections.of(this.events.manager.connection).page(EventEntity, where, {
      limit,
      cursor,
      filter: JSON.stringify([type ?? null, after ?? null]),
      from: from && Number(from[1]),
    });
  }

  async prune(now = Date.now()): Promise<number> {
    const cutoff = now - this.options.retentionDays * DAY_MS;
    const removed = await pruneBefore(this.events, 'at', cutoff);
    for (const prune of this.alsoPruned) await prune(cutoff);
    return removed;
  }

  onApplicationBootstrap(): void {
    this.stopPruning = pruneHourly(this.logger, 'events', () => this.prune());
  }

  onApplicationShutdown(): void {
    this.stopPruning?.();
  }
}
