import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { DataSource, In } from 'typeorm';
import { durationsMs, EventsConfig } from '../../config/app-config';
import { Transactions } from '../../database/transactions';
import { UnitOfWork } from '../../database/unit-of-work';
import { Lifecycle } from '../../http/lifecycle';
import { Metrics } from '../../observability/metrics';
import { EventEntity } from '../event.entity';
import { eventId, EVENTS_OPTIONS, EventsService, matchesType } from '../events.service';
import { consumeOutbox, OUTBOX_BATCH, skipOutbox, Ticker } from '../outbox-consumer';
import { DeliverySender } from './delivery-sender';
import { DeliveryAttempt, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { OutcomeWriter } from './outcome-writer';
import type { Attempt } from './webhook-sender';

export const ATTEMPT_TIMEOUT_MS = 15_000;
/**
 * Longer than a leased delivery can wait (`LEASED_FOR_MS`), then last, then wait for its outcome's
 * write: meanwhile no other instance takes it.
 */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 15_000;
const KEPT_ATTEMPTS = 10;
/** New deliveries a fan-out leases to this process, per place for an attempt. */
const LEASED_AHEAD = 16;
/** A leased delivery not started by then is given back, so that its claim reads the endpoint afresh. */
const LEASED_FOR_MS = 5_000;
const SKIP_EVERY_MS = 60_000;
const MAX_RETRY_AFTER_MS = 86_400_000;
/** More than instances' clocks differ by: the `at` of an event and the `createdAt` of an endpoint compare. */
const CLOCK_SKEW_MS = 300_000;

/**
 * Turns events into deliveries (once across instances), then sends them, `concurrency` at most per
 * instance. A delivery is leased to one instance while `nextAttemptAt` lies ahead: made so by its
 * fan-out or by a claim (`SKIP LOCKED` on PostgreSQL). So one attempt is in flight at most, and one
 * cut short by a crash is taken again later.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly tracer = trace.getTracer('petstore-webhooks');
  private readonly ticker: Ticker;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly retryScheduleMs: number[];
  private skipped = 0;
  private claiming?: Promise<void>;
  private stopping = false;
  private readonly outcomes: OutcomeWriter;
  /** Deliveries a fan-out leased to this process, waiting for a place; `leasing` until its commit. */
  private readonly leased: Array<{ delivery: Claimed; endpoint: WebhookEndpointEntity; event: EventEntity }> =
    [];
  private leasing = 0;
  /** Places a claim has counted on while it reads its deliveries. */
  private reserved = 0;
  /** Work started on the side (a 410's disabling, leases given back) that shutdown waits for. */
  private readonly chores = new Set<Promise<unknown>>();
  /** Due deliveries were left unclaimed: take more as places free up. */
  private backlog = false;

  constructor(
    @InjectDataSource() private readonly connection: DataSource,
    private readonly transactions: Transactions,
    private readonly endpoints: WebhookEndpointsService,
    @Inject(EVENTS_OPTIONS) private readonly config: EventsConfig,
    events: EventsService,
    private readonly sender: DeliverySender,
    @Optional() private readonly metrics: Metrics = new Metrics(),
    @Optional() private readonly lifecycle?: Lifecycle,
  ) {
    this.ticker = new Ticker(() => this.tick(), 'Webhooks', 'webhook deliveries wait', config.pollMs);
    events.onCommitted(() => this.ticker.wake());
    this.retryScheduleMs = durationsMs(config.retrySchedule)!;
    this.outcomes = new OutcomeWriter(connection, () => this.stopping);
  }

  onApplicationBootstrap(): void {
    this.metrics.watchWebhooks(() =>
      this.connection.getRepository(WebhookDeliveryEntity).countBy({ status: 'pending' }),
    );
    this.ticker.wake();
  }

  /** No new attempt; those in flight end (each within its timeout) before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.ticker.stop();
    await this.claiming;
    this.chore(
      releaseLeases(
        this.connection,
        this.leased.splice(0).map(({ delivery }) => delivery),
      ),
    );
    await Promise.allSettled([...this.inFlight]);
    await this.outcomes.flush();
    await Promise.allSettled([...this.chores]);
    await this.sender.stop();
  }

  /** Until caught up: deliveries of new events, then as many due attempts as there is room for. */
  private async tick(): Promise<void> {
    if (!(await this.connection.getRepository(WebhookEndpointEntity).existsBy({ enabled: true }))) {
      // An endpoint takes only events made after it: with none, older ones need no reading.
      if (Date.now() - this.skipped > SKIP_EVERY_MS) {
        await skipOutbox(this.connection, 'webhooks', Date.now() - CLOCK_SKEW_MS);
        this.skipped = Date.now();
      }
    } else {
      const fanOut = {
        columns: FAN_OUT_COLUMNS,
        within: (work: UnitOfWork, events: EventEntity[]) => this.fanOut(work, events),
      };
      try {
        while (
          (await consumeOutbox(this.connection, this.transactions, 'webhooks', fanOut)) === OUTBOX_BATCH
        );
      } finally {
        this.leasing = 0;
      }
    }
    this.startLeased();
    await this.sendDue();
  }

  /** Places for attempts not yet promised: none while stopping, so that what is held ends within the grace period. */
  private room(ahead = 1): number {
    const promised = this.inFlight.size + this.reserved + this.leased.length + this.leasing;
    // Outcomes that cannot be written (the database is away) stop the sending.
    const unwritten = this.outcomes.waiting > this.config.concurrency * LEASED_AHEAD;
    return this.stopping || this.lifecycle?.draining || unwritten
      ? 0
      : this.config.concurrency * ahead - promised;
  }

  /**
   * One delivery per event and enabled endpoint that takes its type and existed when it was
   * committed. Up to `LEASED_AHEAD` per place are made already leased to this process and sent as
   * places free up: a claim less to write and read per delivery (most of a worker's database work).
   */
  private async fanOut(work: UnitOfWork, events: EventEntity[]): Promise<void> {
    const endpoints = await work.manager.find(WebhookEndpointEntity, { where: { enabled: true } });
    const now = Date.now();
    const pairs = events.flatMap((event) =>
      endpoints
        .filter(
          (endpoint) =>
            event.at >= endpoint.createdAt &&
            endpoint.eventTypes.split(' ').some((pattern) => matchesType(pattern, event.type)),
        )
        .map((endpoint) => ({ event, endpoint })),
    );
    if (pairs.length === 0) return;
    const room = Math.max(0, Math.min(this.room(LEASED_AHEAD), pairs.length));
    // Set, not added: one fan-out runs at a time, and one run again after a rollback counts anew.
    this.leasing = room;
    if (pairs.length > room) this.backlog = true;
    const rows = pairs.map(({ event, endpoint }, index) => ({
      endpointId: endpoint.id,
      eventId: event.id,
      eventType: event.type,
      status: 'pending' as const,
      tries: 0,
      nextAttemptAt: index < room ? now + LEASE_MS : now,
      createdAt: now,
      deliveredAt: null,
      attempts: '[]',
    }));
    const ids = await work.insertRows(WebhookDeliveryEntity, rows, true);
    work.afterCommit(() => {
      this.leasing = 0;
      for (const [index, { event, endpoint }] of pairs.slice(0, room).entries())
        this.leased.push({ delivery: { ...rows[index], id: ids[index] }, endpoint, event });
      this.startLeased();
    });
  }

  /** One claim at a time, so that the attempts in flight never exceed `concurrency`. */
  private sendDue(): Promise<void> {
    return (this.claiming ??= this.claim().finally(() => (this.claiming = undefined)));
  }

  private async claim(): Promise<void> {
    const room = this.room();
    if (room <= 0) return;
    this.reserved = room;
    try {
      await this.startClaimed(await claimDue(this.connection, room, Date.now()), room);
    } finally {
      this.reserved = 0;
    }
  }

  private async startClaimed(claimed: Claimed[], room: number): Promise<void> {
    this.backlog = claimed.length === room;
    if (claimed.length === 0) return;
    const byId = <T extends { id: number }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));
    const distinct = (ids: number[]) => [...new Set(ids)];
    const [endpoints, events] = await Promise.all([
      this.connection
        .getRepository(WebhookEndpointEntity)
        .findBy({ id: In(distinct(claimed.map((delivery) => delivery.endpointId))) })
        .then(byId),
      eventsById(this.connection, distinct(claimed.map((delivery) => delivery.eventId))).then(byId),
    ]);
    for (const delivery of claimed) {
      const endpoint = endpoints.get(delivery.endpointId);
      // Removed: its deliveries went with it.
      if (endpoint) this.start(delivery, endpoint, events.get(delivery.eventId));
    }
  }

  /**
   * Leased deliveries while there are places, with the endpoint as their fan-out read it; those
   * leased over `LEASED_FOR_MS` ago are given back (at each tick too), for a claim to read it afresh.
   */
  private startLeased(): void {
    if (this.stopping || this.lifecycle?.draining) return; // they are given back at shutdown
    const stale: Claimed[] = [];
    const since = Date.now() - LEASED_FOR_MS + LEASE_MS;
    // In lease order: the stale ones are first.
    while (this.leased.length > 0 && this.leased[0].delivery.nextAttemptAt <= since)
      stale.push(this.leased.shift()!.delivery);
    while (this.inFlight.size + this.reserved < this.config.concurrency && this.leased.length > 0) {
      const { delivery, endpoint, event } = this.leased.shift()!;
      this.start(delivery, endpoint, event);
    }
    if (stale.length === 0) return;
    this.backlog = true;
    this.chore(releaseLeases(this.connection, stale).then(() => this.sendDue()));
  }

  /** Runs `work` on the side: logged if it fails, waited for at shutdown. */
  private chore(work: Promise<unknown>): void {
    const done: Promise<unknown> = work
      .catch((error: unknown) => this.logger.warn(`webhook bookkeeping failed: ${(error as Error).message}`))
      .finally(() => this.chores.delete(done));
    this.chores.add(done);
  }

  private start(delivery: Claimed, endpoint: WebhookEndpointEntity, event: EventEntity | undefined): void {
    const attempt: Promise<void> = this.deliver(delivery, endpoint, event)
      .catch((error: unknown) =>
        this.logger.warn(`a webhook attempt could not be recorded: ${(error as Error).message}`),
      )
      .finally(() => {
        this.inFlight.delete(attempt);
        this.startLeased();
        // More are due: take the next ones as half the places free up.
        if (this.backlog && !this.stopping && this.room() >= this.config.concurrency / 2)
          void this.sendDue().catch(() => undefined);
      });
    this.inFlight.add(attempt);
  }

  private async deliver(
    delivery: Claimed,
    endpoint: WebhookEndpointEntity,
    event?: EventEntity,
  ): Promise<void> {
    const started = Date.now();
    const result: Attempt = !endpoint.enabled
      ? { ok: false, error: 'the endpoint is disabled', excerpt: '', durationMs: 0 }
      : !event
        ? { ok: false, error: 'the event is past its retention', excerpt: '', durationMs: 0 }
        : await this.tracer.startActiveSpan('webhook delivery', async (span) => {
            span.setAttributes({
              'petstore.event.type': event.type,
              'petstore.webhook.endpoint': endpoint.id,
            });
            const attempt = await this.attempt(endpoint, event, started);
            if (attempt.status !== undefined) span.setAttribute('http.response.status_code', attempt.status);
            if (!attempt.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error });
            span.end();
            return attempt;
          });
    this.metrics.webhookAttempt(result.ok, result.durationMs / 1000);
    if (result.ok && event) this.metrics.webhookDelivered((Date.now() - event.at) / 1000);
    this.record(delivery, started, result, endpoint.enabled && event !== undefined);
  }

  private attempt(endpoint: WebhookEndpointEntity, event: EventEntity, now: number): Promise<Attempt> {
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && (endpoint.previousSecretExpiresAt ?? 0) > now)
      secrets.push(endpoint.previousSecret);
    const { type, at, data } = event;
    return this.sender.send({ url: endpoint.url, secrets, eventId: eventId(event.id), type, at, data });
  }

  private record(delivery: Claimed, at: number, result: Attempt, retryable: boolean): void {
    const tries = delivery.tries + 1;
    const { ok, status, error, excerpt, durationMs, retryAfterMs } = result;
    const attempt: DeliveryAttempt = {
      at,
      durationMs,
      ...(status === undefined ? {} : { status }),
      ...(error ? { error } : {}),
      ...(excerpt ? { excerpt } : {}),
    };
    const attempts = JSON.stringify(
      [...(JSON.parse(delivery.attempts) as DeliveryAttempt[]), attempt].slice(-KEPT_ATTEMPTS),
    );
    const schedule = this.retryScheduleMs;
    const gone = status === 410;
    const next =
      ok || gone || !retryable || tries > schedule.length
        ? undefined
        : Date.now() +
          Math.max(jittered(schedule[tries - 1]), Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    if (next !== undefined) this.ticker.wake(next - Date.now());
    this.outcomes.add({
      id: delivery.id,
      lease: delivery.nextAttemptAt,
      status: ok ? 'succeeded' : next === undefined ? 'failed' : 'pending',
      tries,
      attempts,
      nextAttemptAt: next ?? Date.now(),
      deliveredAt: ok ? Date.now() : null,
    });
    if (gone) this.chore(this.endpoints.disable(delivery.endpointId, 'The receiver answered 410 Gone.'));
  }
}

type Claimed = Pick<
  WebhookDeliveryEntity,
  'id' | 'endpointId' | 'eventId' | 'tries' | 'attempts' | 'nextAttemptAt'
>;

/** Plain SQL: hydrating entities was a tenth of the delivery path's CPU on the API's thread (measured). */
async function eventsById(connection: DataSource, ids: number[]): Promise<EventEntity[]> {
  const rows: Array<{ id: string | number; type: string; at: string | number; data: string }> =
    await connection.query(
      `SELECT id, type, at, data FROM events WHERE id IN (${ids.map((_, i) => connection.driver.createParameter('', i)).join(', ')})`,
      ids,
    );
  return rows.map(({ id, type, at, data }) => ({ id: Number(id), type, at: Number(at), data }));
}

/** Leases at most `room` due deliveries in one statement: a transaction would slow others (sqlite-gate.ts). */
async function claimDue(connection: DataSource, room: number, now: number): Promise<Claimed[]> {
  const postgres = connection.options.type === 'postgres';
  const [at, limit, lease] = [0, 1, 2].map((index) => connection.driver.createParameter('', index));
  const runner = connection.createQueryRunner();
  try {
    // WITH first: TypeORM's SQLite driver reads no rows back from a statement that starts with UPDATE.
    const { records } = await runner.query(
      `WITH due AS (SELECT id FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= ${at}
         ORDER BY next_attempt_at LIMIT ${limit}${postgres ? ' FOR UPDATE SKIP LOCKED' : ''})
       UPDATE webhook_deliveries SET next_attempt_at = ${lease} WHERE id IN (SELECT id FROM due)
       RETURNING id, endpoint_id, event_id, tries, attempts`,
      [now, room, now + LEASE_MS],
      true,
    );
    return (records as Array<Record<string, string | number>>).map((row) => ({
      id: Number(row.id),
      endpointId: Number(row.endpoint_id),
      eventId: Number(row.event_id),
      tries: Number(row.tries),
      attempts: String(row.attempts),
      nextAttemptAt: now + LEASE_MS,
    }));
  } finally {
    await runner.release();
  }
}

/** Makes leased deliveries due at once, where the lease is still this process's. */
async function releaseLeases(connection: DataSource, deliveries: Claimed[]): Promise<void> {
  const parameter = (index: number) => connection.driver.createParameter('', index);
  for (let start = 0; start < deliveries.length; start += 100) {
    const chunk = deliveries.slice(start, start + 100);
    const leases = chunk.map(
      (_, i) => `(id = ${parameter(2 * i + 1)} AND next_attempt_at = ${parameter(2 * i + 2)})`,
    );
    await connection.query(
      `UPDATE webhook_deliveries SET next_attempt_at = ${parameter(0)} WHERE status = 'pending' AND (${leases.join(' OR ')})`,
      [Date.now(), ...chunk.flatMap((delivery) => [delivery.id, delivery.nextAttemptAt])],
    );
  }
}

/** ±10 %, so that deliveries failed together are not all retried in the same instant. */
const jittered = (ms: number) => Math.round(ms * (0.9 + Math.random() * 0.2));

const FAN_OUT_COLUMNS: (keyof EventEntity)[] = ['id', 'type', 'at', 'data'];
