import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, FindOptionsWhere, Like, MoreThan, Repository } from 'typeorm';
import { ChangeEvent, EventOutbox } from '../common/event-outbox';
import { validationFailed } from '../common/errors/api-exception';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import { insertLast, whenCommitted } from '../database/resource-store';
import { DAY_MS, pruneBefore, pruneHourly } from '../database/retention';
import { EventEntity } from './event.entity';
import { PublishedEvent, publishedJson } from './event-sink';
import { WebhookDeliveryEntity } from './webhook-delivery.entity';

export const EVENTS_OPTIONS = Symbol('EVENTS_OPTIONS');

/** `evt_` and 16 digits: ids sort as text as they do as numbers. */
export const EVENT_ID_FORMAT = /^evt_(\d{16})$/;
export const eventId = (id: number): string => `evt_${String(id).padStart(16, '0')}`;

function parseEventId(raw: string, field: string): number {
  const match = EVENT_ID_FORMAT.exec(raw);
  if (!match)
    throw validationFailed([{ field, message: `${field} must be an event id like evt_0000000000000001` }]);
  return Number(match[1]);
}

export function published({ id, type, at, data }: EventEntity): PublishedEvent {
  return JSON.parse(publishedJson(eventId(id), type, at, data)) as PublishedEvent;
}

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

  constructor(
    @InjectRepository(EventEntity) private readonly events: Repository<EventEntity>,
    @InjectRepository(WebhookDeliveryEntity) private readonly deliveries: Repository<WebhookDeliveryEntity>,
    @Inject(EVENTS_OPTIONS) private readonly options: { retentionDays: number },
  ) {}

  private readonly listeners: Array<() => void> = [];

  append(transaction: EntityManager, changes: readonly ChangeEvent[]): Promise<void> {
    const at = Date.now();
    const rows = changes.map(({ type, data }) => ({ type, at, data: JSON.stringify(data) }));
    whenCommitted(transaction, this.committed);
    return insertLast(transaction, EventEntity, rows, inIdOrder);
  }

  /** `listener` runs after each commit that wrote events here (another instance's are polled for). */
  onCommitted(listener: () => void): void {
    this.listeners.push(listener);
  }

  private readonly committed = () => this.listeners.forEach((listener) => listener());

  async list(
    filter: { type?: string; after?: string },
    limit: number,
    cursor?: string,
  ): Promise<Page<EventEntity>> {
    const filterText = JSON.stringify([filter.type ?? null, filter.after ?? null]);
    const afterId =
      cursor !== undefined
        ? decodeCursor(cursor, filterText).afterId
        : filter.after !== undefined
          ? parseEventId(filter.after, 'after')
          : 0;
    const where: FindOptionsWhere<EventEntity> = { id: MoreThan(afterId) };
    if (filter.type !== undefined && filter.type !== '*')
      where.type = filter.type.endsWith('.*') ? Like(`${filter.type.slice(0, -1)}%`) : filter.type;
    const rows = await this.events.find({ where, order: { id: 'ASC' }, take: limit + 1 });
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    return { items, nextCursor: encodeCursor({ afterId: items[items.length - 1].id, filter: filterText }) };
  }

  async prune(now = Date.now()): Promise<number> {
    const cutoff = now - this.options.retentionDays * DAY_MS;
    const removed = await pruneBefore(this.events, 'at', cutoff);
    await pruneBefore(this.deliveries, 'createdAt', cutoff);
    return removed;
  }

  onApplicationBootstrap(): void {
    this.stopPruning = pruneHourly(this.logger, 'events', () => this.prune());
  }

  onApplicationShutdown(): void {
    this.stopPruning?.();
  }
}

/** PostgreSQL hands ids out before commit: held from insert to commit, the lock makes them visible in order. */
async function inIdOrder(transaction: EntityManager): Promise<void> {
  if (transaction.connection.options.type === 'postgres')
    await transaction.query("SELECT pg_advisory_xact_lock(hashtext('petstore_events'))");
}
