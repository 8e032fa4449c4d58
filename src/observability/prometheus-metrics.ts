import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  AuthFailureReason,
  IdempotencyConflictReason,
  Metrics,
  RateLimitKind,
  ReadCacheKind,
} from './metrics';

/** The OpenTelemetry recommendation for `http.server.request.duration`, in seconds. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** Methods kept as they are in the `method` label; anything else is `_OTHER` (semantic conventions). */
const KNOWN_METHODS = new Set('GET HEAD POST PUT DELETE CONNECT OPTIONS TRACE PATCH'.split(' '));

function packageVersion(): string {
  try {
    const manifest = readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8');
    const { version } = JSON.parse(manifest) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export class PrometheusMetrics extends Metrics {
  override readonly enabled = true;
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  private readonly duration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP requests, from the first byte read to the last byte of the answer.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: DURATION_BUCKETS,
    registers: this.registers,
  });
  private readonly inFlight = new Gauge({
    name: 'http_server_active_requests',
    help: 'HTTP requests being served now.',
    registers: this.registers,
  });
  /** One prepared histogram child per method, route and status: no label hashing per request. */
  private readonly observers = new Map<string, Histogram.Internal<string>>();
  private readonly authFailures = this.counter(
    'petstore_auth_failures_total',
    'Requests refused by the API key check, by reason: 401 for a missing, invalid, revoked or expired key, 403 for a missing scope.',
    { reason: ['missing', 'invalid', 'revoked', 'expired', 'insufficient_scope'] },
  );
  private readonly rateLimitRefusals = this.counter(
    'petstore_rate_limited_total',
    'Requests refused 429 by a rate limit, by limit: per_key or auth_failures.',
    { limit: ['per_key', 'auth_failures'] },
  );
  private readonly replays = this.counter(
    'petstore_idempotency_replays_total',
    'Creates answered with the stored response of an earlier request with the same Idempotency-Key.',
  );
  private readonly conflicts = this.counter(
    'petstore_idempotency_conflicts_total',
    'Creates refused over their Idempotency-Key: in_flight (409) or body_mismatch (422).',
    { reason: ['in_flight', 'body_mismatch'] },
  );
  private readonly cacheLookups = this.counter(
    'petstore_read_cache_lookups_total',
    'Lookups in the in-process read cache, by kind (row: by id, page: full pages) and result.',
    { cache: ['row', 'page'], result: ['hit', 'miss'] },
  );
  private readonly queryErrors = this.counter(
    'db_client_query_errors_total',
    'Database queries that failed (constraint violations included), by database system.',
    { db_system: [] },
  );
  private readonly webhookAttempts = this.counter(
    'petstore_webhook_attempts_total',
    'Webhook delivery attempts, by result: success (a 2xx) or failure (any other answer, a timeout, no connection).',
    { result: ['success', 'failure'] },
  );
  private readonly webhookAttemptDuration = new Histogram({
    name: 'petstore_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts, from connecting to the end of the answer (or the timeout).',
    buckets: DURATION_BUCKETS,
    registers: this.registers,
  });
  private readonly webhookLatency = new Histogram({
    name: 'petstore_webhook_delivery_latency_seconds',
    help: "From an event's commit to its successful delivery, retries included.",
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000],
    registers: this.registers,
  });
  /** Bound once: a lookup is counted on every cached request. */
  private readonly cacheCounters: Record<string, { inc(): void }> = Object.fromEntries(
    ['row', 'page'].flatMap((cache) =>
      [true, false].map((hit) => [`${cache} ${hit}`, this.cacheLookups.labels(cache, hit ? 'hit' : 'miss')]),
    ),
  );
  private databaseSystem = 'sqlite';

  constructor() {
    super();
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which promtool refuses; nodejs_active_* by type hold the same numbers.
    for (const kind of ['handles', 'requests', 'resources'])
      this.registry.removeSingleMetric(`nodejs_active_${kind}_total`);
    new Gauge({
      name: 'petstore_build_info',
      help: 'The running build: 1, labelled with the service version and the Node.js version.',
      labelNames: ['version', 'nodejs_version'],
      registers: this.registers,
    }).set({ version: packageVersion(), nodejs_version: process.version }, 1);
  }

  /** Every combination of the label values starts at 0: a series from the start. */
  private counter(name: string, help: string, labels: Record<string, string[]> = {}): Counter {
    const counter = new Counter({ name, help, labelNames: Object.keys(labels), registers: this.registers });
    const combinations = Object.values(labels).reduce<string[][]>(
      (all, values) => all.flatMap((prefix) => values.map((value) => [...prefix, value])),
      [[]],
    );
    for (const values of combinations) counter.labels(...values).inc(0);
    return counter;
  }

  override watchDatabase(system: string, pool?: Pool): void {
    this.databaseSystem = system;
    this.queryErrors.labels(system).inc(0);
    if (!pool) return;
    new Gauge({
      name: 'db_client_connections',
      help: 'PostgreSQL connections of this instance by state: idle or used.',
      labelNames: ['state'],
      registers: this.registers,
      collect() {
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'used' }, pool.totalCount - pool.idleCount);
      },
    });
    new Gauge({
      name: 'db_client_connections_max',
      help: 'Most PostgreSQL connections this instance may open (DB_POOL_SIZE).',
      registers: this.registers,
    }).set(pool.options.max);
    new Gauge({
      name: 'db_client_connections_pending_requests',
      help: 'Queries waiting for a free PostgreSQL connection.',
      registers: this.registers,
      collect() {
        this.set(pool.waitingCount);
      },
    });
  }

  override async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  override requestStarted(): void {
    this.inFlight.inc();
  }

  override requestEnded(method: string, route: string, statusCode: number, seconds: number): void {
    this.inFlight.dec();
    const key = `${method} ${statusCode} ${route}`;
    let observer = this.observers.get(key);
    if (observer === undefined) {
      const methodLabel = KNOWN_METHODS.has(method) ? method : '_OTHER';
      observer = this.duration.labels(methodLabel, route, String(statusCode));
      this.observers.set(key, observer);
    }
    observer.observe(seconds);
  }

  override authFailure(reason: AuthFailureReason): void {
    this.authFailures.labels(reason).inc();
  }

  override rateLimited(limit: RateLimitKind): void {
    this.rateLimitRefusals.labels(limit).inc();
  }

  override idempotencyReplay(): void {
    this.replays.inc();
  }

  override idempotencyConflict(reason: IdempotencyConflictReason): void {
    this.conflicts.labels(reason).inc();
  }

  override readCache(cache: ReadCacheKind, hit: boolean): void {
    this.cacheCounters[`${cache} ${hit}`].inc();
  }

  override webhookAttempt(ok: boolean, seconds: number): void {
    this.webhookAttempts.labels(ok ? 'success' : 'failure').inc();
    this.webhookAttemptDuration.observe(seconds);
  }

  override webhookDelivered(secondsSinceCommit: number): void {
    this.webhookLatency.observe(secondsSinceCommit);
  }

  override watchWebhooks(backlog: () => Promise<number>): void {
    new Gauge({
      name: 'petstore_webhook_backlog',
      help: 'Webhook deliveries pending (due now or waiting for a retry), across every instance.',
      registers: [this.registry],
      async collect() {
        this.set(await backlog().catch(() => Number.NaN));
      },
    });
  }

  override queryError(): void {
    this.queryErrors.labels(this.databaseSystem).inc();
  }
}
