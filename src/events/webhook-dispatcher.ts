import { Inject, Injectable, Logger, OnApplicationBootstrap, Optional } from '@nestjs/common';
import { BeforeApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { DataSource, EntityManager, In, LessThanOrEqual } from 'typeorm';
import { Metrics } from '../observability/metrics';
import { runTransaction } from '../database/resource-store';
import { AddressPolicy } from './address-policy';
import { EventEntity } from './event.entity';
import { EventsService, matchesType, published } from './events.service';
import { consumeOutbox, OUTBOX_BATCH, skipOutbox, Ticker } from './outbox-consumer';
import { signatureHeaders } from './signature';
import { DeliveryAttempt, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';
import { ADDRESS_POLICY, WebhookEndpointsService } from './webhook-endpoints.service';
import { Attempt, send } from './webhook-sender';

export interface DeliveryOptions {
  retryScheduleMs: readonly number[];
  concurrency: number;
}
export const DELIVERY_OPTIONS = Symbol('DELIVERY_OPTIONS');

export const ATTEMPT_TIMEOUT_MS = 15_000;
/** Longer than an attempt can last: while it runs, no other instance takes the delivery. */
const LEASE_MS = ATTEMPT_TIMEOUT_MS + 15_000;
const KEPT_ATTEMPTS = 10;
const SKIP_EVERY_MS = 60_000;
const MAX_RETRY_AFTER_MS = 86_400_000;
/** More than instances' clocks differ by: the `at` of an event and the `createdAt` of an endpoint compare. */
const CLOCK_SKEW_MS = 300_000;

/**
 * Turns events into deliveries (once across instances), then sends the due ones, `concurrency` at
 * most per instance. A claim moves `nextAttemptAt` past the attempt (a lease; `SKIP LOCKED` on
 * PostgreSQL): one attempt in flight at most, and one cut short by a crash is taken again later.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private readonly tracer = trace.getTracer('petstore-webhooks');
  private readonly ticker = new Ticker(() => this.tick());
  private readonly inFlight = new Set<Promise<void>>();
  private failing = false;
  private skipped = 0;
  private claiming?: Promise<void>;
  private stopping = false;

  constructor(
    @InjectDataSource() private readonly connection: DataSource,
    private readonly endpoints: WebhookEndpointsService,
    @Inject(ADDRESS_POLICY) private readonly policy: AddressPolicy,
    @Inject(DELIVERY_OPTIONS) private readonly options: DeliveryOptions,
    events: EventsService,
    @Optional() private readonly metrics: Metrics = new Metrics(),
  ) {
    events.onCommitted(() => this.ticker.wake());
  }

  onApplicationBootstrap(): void {
    this.metrics.watchWebhooks(() => this.backlog());
    this.ticker.start();
  }

  /** No new attempt; those in flight end (each within its timeout) before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.ticker.stop();
    await this.claiming;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Until caught up: deliveries of new events, then as many due attempts as there is room for. */
  private async tick(): Promise<void> {
    try {
      if (!(await this.connection.getRepository(WebhookEndpointEntity).existsBy({ enabled: true }))) {
        // An endpoint takes only events made after it: with none, older ones need no reading.
        if (Date.now() - this.skipped > SKIP_EVERY_MS) {
          await skipOutbox(this.connection, 'webhooks', Date.now() - CLOCK_SKEW_MS);
          this.skipped = Date.now();
        }
      } else
        while (
          (await consumeOutbox(this.connection, 'webhooks', {
            columns: ['id', 'type', 'at'],
            within: fanOut,
          })) === OUTBOX_BATCH
        );
      await this.sendDue();
      this.failing = false;
    } catch (error) {
      // A database blink: the next tick tries again; one line per outage, not one per tick.
      if (!this.failing) this.logger.warn(`webhook deliveries wait: ${(error as Error).message}`);
      this.failing = true;
    }
  }

  /** One claim at a time, so that the attempts in flight never exceed `concurrency`. */
  private sendDue(): Promise<void> {
    return (this.claiming ??= this.claim().finally(() => (this.claiming = undefined)));
  }

  private async claim(): Promise<void> {
    const room = this.options.concurrency - this.inFlight.size;
    if (room <= 0) return;
    const repository = this.connection.getRepository(WebhookDeliveryEntity);
    const now = Date.now();
    const due = { status: 'pending' as const, nextAttemptAt: LessThanOrEqual(now) };
    if (!(await repository.existsBy(due))) return;
    const postgres = this.connection.options.type === 'postgres';
    const claimed = await runTransaction(this.connection, async (transaction) => {
      const rows = await transaction.find(WebhookDeliveryEntity, {
        where: due,
        order: { nextAttemptAt: 'ASC' },
        take: room,
        ...(postgres
          ? { lock: { mode: 'pessimistic_write' as const, onLocked: 'skip_locked' as const } }
          : {}),
      });
      if (rows.length === 0) return rows;
      const lease = now + LEASE_MS;
      await transaction.update(
        WebhookDeliveryEntity,
        { id: In(rows.map(({ id }) => id)) },
        { nextAttemptAt: lease },
      );
      return rows.map((row) => ({ ...row, nextAttemptAt: lease }));
    });
    if (claimed.length === 0) return;
    const byId = <T extends { id: number }>(rows: T[]) => new Map(rows.map((row) => [row.id, row]));
    const distinct = (ids: number[]) => In([...new Set(ids)]);
    const [endpoints, events] = await Promise.all([
      this.connection
        .getRepository(WebhookEndpointEntity)
        .findBy({ id: distinct(claimed.map((delivery) => delivery.endpointId)) })
        .then(byId),
      this.connection
        .getRepository(EventEntity)
        .findBy({ id: distinct(claimed.map((delivery) => delivery.eventId)) })
        .then(byId),
    ]);
    const backlog = claimed.length === room;
    for (const delivery of claimed) {
      const endpoint = endpoints.get(delivery.endpointId);
      if (!endpoint) continue; // removed: its deliveries went with it
      const attempt: Promise<void> = this.deliver(delivery, endpoint, events.get(delivery.eventId))
        .catch((error: unknown) =>
          this.logger.warn(`a webhook attempt could not be recorded: ${(error as Error).message}`),
        )
        .finally(() => {
          this.inFlight.delete(attempt);
          // A full claim means more are due: take the next ones as half the room frees up.
          if (backlog && !this.stopping && this.inFlight.size <= this.options.concurrency / 2)
            void this.sendDue().catch(() => undefined);
        });
      this.inFlight.add(attempt);
    }
  }

  private async deliver(
    delivery: WebhookDeliveryEntity,
    endpoint: WebhookEndpointEntity,
    event: EventEntity | undefined,
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
    await this.record(delivery, started, result, endpoint.enabled && event !== undefined);
  }

  private attempt(endpoint: WebhookEndpointEntity, event: EventEntity, now: number): Promise<Attempt> {
    const body = JSON.stringify(published(event));
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && (endpoint.previousSecretExpiresAt ?? 0) > now)
      secrets.push(endpoint.previousSecret);
    const headers = signatureHeaders(secrets, published(event).id, Math.floor(now / 1000), body);
    return send(
      { url: endpoint.url, headers, body },
      { policy: this.policy, timeoutMs: ATTEMPT_TIMEOUT_MS, excerptBytes: 1024 },
    );
  }

  /** Only while this attempt still holds the lease: a late answer never overwrites a newer attempt. */
  private async record(
    delivery: WebhookDeliveryEntity,
    at: number,
    result: Attempt,
    retryable: boolean,
  ): Promise<void> {
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
    const schedule = this.options.retryScheduleMs;
    const gone = status === 410;
    const next =
      ok || gone || !retryable || tries > schedule.length
        ? undefined
        : Date.now() +
          Math.max(jittered(schedule[tries - 1]), Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
    if (next !== undefined) this.ticker.wake(next - Date.now());
    const outcome = ok ? 'succeeded' : next === undefined ? 'failed' : 'pending';
    await this.connection.getRepository(WebhookDeliveryEntity).update(
      { id: delivery.id, status: 'pending', nextAttemptAt: delivery.nextAttemptAt },
      {
        status: outcome,
        tries,
        attempts,
        nextAttemptAt: next ?? Date.now(),
        deliveredAt: ok ? Date.now() : null,
      },
    );
    if (gone) await this.endpoints.disable(delivery.endpointId, 'The receiver answered 410 Gone.');
  }

  private backlog(): Promise<number> {
    return this.connection.getRepository(WebhookDeliveryEntity).countBy({ status: 'pending' });
  }
}

/** ±10 %, so that deliveries failed together are not all retried in the same instant. */
const jittered = (ms: number) => Math.round(ms * (0.9 + Math.random() * 0.2));

/** One delivery per event and enabled endpoint that takes its type and existed when it was committed. */
async function fanOut(transaction: EntityManager, events: EventEntity[]): Promise<void> {
  const endpoints = await transaction.find(WebhookEndpointEntity, { where: { enabled: true } });
  const now = Date.now();
  const rows = events.flatMap((event) =>
    endpoints
      .filter(
        (endpoint) =>
          event.at >= endpoint.createdAt &&
          endpoint.eventTypes.split(' ').some((pattern) => matchesType(pattern, event.type)),
      )
      .map((endpoint) => ({
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        status: 'pending' as const,
        tries: 0,
        nextAttemptAt: now,
        createdAt: now,
        deliveredAt: null,
        attempts: '[]',
      })),
  );
  for (let start = 0; start < rows.length; start += 100)
    await transaction.insert(WebhookDeliveryEntity, rows.slice(start, start + 100));
}
