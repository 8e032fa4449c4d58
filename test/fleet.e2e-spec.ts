import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { connect } from 'nats';
import { eventId } from '../src/events/events.service';
import { TEST_DATABASE_URL, TEST_KEY } from './support/app';
import { sparePort } from './support/ports';
import { RunningService, spawnService, stopService } from './support/process';
import { startReceiver } from './support/webhook-receiver';
import {
  postgresBinaries,
  PostgresCluster,
  RedisServer,
  startPostgresCluster,
  startRedisServer,
} from './support/servers';

/**
 * The service as deployed (docs/deployment.md#workers): two API instances (`PROCESS_ROLE=api`)
 * behind Debian's nginx configured by deploy/nginx.conf as shipped (its ports moved to spare
 * ones), and two delivery workers (`PROCESS_ROLE=worker`) beside them, on one PostgreSQL cluster
 * and one Redis server of the test's own, under steady mixed load from clients that retry the way
 * docs/operations.md tells them to. Phases: a rolling restart of all four, a `kill -9` of one
 * worker as the receiver takes one of its deliveries and its restart, a `kill -9` of one API
 * instance and its restart, a PostgreSQL restart, a Redis restart. Clients must see no error in
 * any phase but the API kill, where only requests in flight on the killed instance may fail, and
 * their retries succeed within 5 s; no acknowledged create is lost, and no key is stored twice.
 * Meanwhile the workers publish every change (the API instances send nothing): to a webhook
 * receiver that answers 500 for a while, and to a NATS server of the test's own; each committed
 * change has one event, each event reaches both, and what the killed worker had claimed is sent
 * again once its lease has run out.
 */
const ROOT = join(__dirname, '..');
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
const bin = postgresBinaries();
const inThisPass = !TEST_DATABASE_URL; // brings its own servers: runs once, in the default pass
const NATS_SERVER = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((path) => existsSync(path));
const ready = Boolean(NGINX && bin && NATS_SERVER) && inThisPass;
/** Short, so that the test sees the last retry: the shipped schedule runs for more than a day. */
const RETRY_SCHEDULE = [1000, 2000, 4000, 8000, 8000];
/** How long a delivery claimed by an attempt cut short (its worker killed, the database restarted) waits. */
const LEASE_MS = 30_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FAIL_TIMEOUT_MS =
  1000 * Number(/fail_timeout=(\d+)s/.exec(readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8'))?.[1]);

if (!ready && inThisPass) {
  it('needs nginx and the PostgreSQL server binaries', () => {
    if (process.env.CI)
      throw new Error(
        'nginx, PostgreSQL or NATS is missing: apt-get install -y nginx postgresql nats-server',
      );
    console.warn('skipped: no nginx, PostgreSQL or nats-server binaries');
  });
}

/** deploy/nginx.conf with its listener and upstream servers on these ports; nothing else changed. */
function nginxConf(listen: number, upstreams: number[]): string {
  const shipped = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');
  const server = /^(\s*)server 127\.0\.0\.1:\d+( .*;)$/m.exec(shipped);
  if (!server) throw new Error('deploy/nginx.conf has no upstream server line');
  const lines = upstreams.map((port) => `${server[1]}server 127.0.0.1:${port}${server[2]}`).join('\n');
  return shipped
    .replace(/^\s*server 127\.0\.0\.1:\d+ .*;\n/gm, '')
    .replace(/^(\s*)least_conn;$/m, `$1least_conn;\n${lines}`)
    .replace(/^(\s*)listen \d+;$/m, `$1listen 127.0.0.1:${listen};`);
}

type Phase =
  | 'steady'
  | 'rolling restart'
  | 'worker kill -9'
  | 'api kill -9'
  | 'postgres restart'
  | 'redis restart'
  | 'receiver outage';
interface Outcome {
  phase: Phase;
  op: 'list' | 'get' | 'create' | 'patch';
  /** The HTTP status (the phase is the one it came in), or the socket error of a request with no answer. */
  result: number | string;
  retry: boolean;
}

const describeFleet = ready ? describe : describe.skip;

describeFleet('Two API instances behind nginx and two workers through restarts and faults (e2e)', () => {
  let cluster: PostgresCluster;
  let redis: RedisServer;
  let nginx: ChildProcess;
  let dir: string;
  /** The API instances, behind nginx; each keeps its ports across restarts. */
  const apis: Array<{ port: number; metricsPort: number }> = [];
  const instances: RunningService[] = [];
  /** The delivery workers, not behind nginx: HEALTH_PORT is their only port (PORT a spare one, unopened). */
  const workerPorts: Array<{ healthPort: number; port: number }> = [];
  const workers: RunningService[] = [];
  let env: Record<string, string>;
  let base: string;
  let nats: ChildProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let receiverFailing = false;
  /** Called as the receiver takes a delivery, before it answers. */
  let onReceipt: (() => void) | undefined;
  /** When a worker was killed or the database restarted: an attempt then may end unrecorded. */
  const faults: Array<{ from: number; to: number }> = [];
  const faultAt = (at: number) => faults.some(({ from, to }) => at >= from - 1000 && at <= to + 1000);

  beforeAll(async () => {
    cluster = await startPostgresCluster(bin!);
    const started = await startRedisServer();
    if (!started) throw new Error('redis-server is missing');
    redis = started;
    dir = mkdtempSync(join(tmpdir(), 'petstore-nginx-'));
    const taken = new Set<number>();
    const spare = async (): Promise<number> => {
      for (;;) {
        const port = await sparePort();
        if (taken.has(port)) continue;
        taken.add(port);
        return port;
      }
    };
    const natsPort = await spare();
    nats = spawn(NATS_SERVER!, ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', join(dir, 'nats')], {
      stdio: 'ignore',
    });
    receiver = await startReceiver(() => {
      onReceipt?.();
      return receiverFailing ? 500 : 200;
    });
    env = {
      DATABASE_URL: cluster.url,
      DATABASE_SCHEMA: 'fleet',
      REDIS_URL: redis.url,
      API_KEYS: TEST_KEY,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PER_MINUTE: '1000000',
      EVENTS_NATS_URL: `nats://127.0.0.1:${natsPort}`,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE.map((ms) => `${ms}ms`).join(','),
    };
    for (let i = 0; i < 2; i++) apis.push({ port: await spare(), metricsPort: await spare() });
    for (let i = 0; i < 2; i++) workerPorts.push({ healthPort: await spare(), port: await spare() });
    // One at a time: the first runs the migrations.
    for (let i = 0; i < apis.length; i++) instances.push(await spawnService(apiEnv(i)));
    for (let i = 0; i < workerPorts.length; i++) workers.push(await spawnService(workerEnv(i)));
    const listen = await spare();
    const upstreams = apis.map(({ port }) => port);
    writeFileSync(join(dir, 'nginx.conf'), nginxConf(listen, upstreams));
    nginx = spawn(NGINX!, ['-c', join(dir, 'nginx.conf'), '-p', dir, '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', openSync(join(dir, 'error.log'), 'a')],
    });
    base = `http://127.0.0.1:${listen}`;
    for (let i = 0; ; i++) {
      const up = await fetch(`${base}/health/ready`).catch(() => undefined);
      if (up?.status === 200) break;
      if (i > 100) throw new Error('nginx did not start');
      await sleep(50);
    }
    const endpoint = await fetch(`${base}/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TEST_KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, eventTypes: ['pet.*'] }),
    });
    expect(endpoint.status).toBe(201);
  }, 120_000);

  afterAll(async () => {
    nginx?.kill('SIGTERM');
    nats?.kill('SIGTERM');
    await receiver?.close();
    await Promise.all([...instances, ...workers].map((service) => stopService(service, 'SIGKILL')));
    await redis?.stop();
    cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** API instance `index`: behind nginx, sending nothing; its metrics on a port of their own. */
  function apiEnv(index: number): Record<string, string> {
    const { port, metricsPort } = apis[index];
    return { ...env, PROCESS_ROLE: 'api', PORT: String(port), METRICS_PORT: String(metricsPort) };
  }

  /** Worker `index`: its probes and metrics on HEALTH_PORT, its only port (PORT must stay closed). */
  function workerEnv(index: number): Record<string, string> {
    const { healthPort, port } = workerPorts[index];
    return { ...env, PROCESS_ROLE: 'worker', HEALTH_PORT: String(healthPort), PORT: String(port) };
  }

  it('shows clients no error through a rolling restart, a worker killed -9, a PostgreSQL and a Redis restart; an API kill -9 only what it had in flight', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    const outcomes: Outcome[] = [];
    const acknowledged = new Map<string, number>();
    const recoveries: number[] = [];
    let phase: Phase = 'steady';
    let running = true;
    let created = 0;

    const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; body: string; retryAfter?: string }>((resolve, reject) => {
        const req = httpRequest(
          `${base}${path}`,
          {
            method,
            agent,
            headers: { Authorization: `Bearer ${TEST_KEY}`, ...headers },
            timeout: 10_000,
          },
          (res) => {
            let text = '';
            res.on('data', (chunk: Buffer) => (text += chunk.toString()));
            res.on('end', () =>
              resolve({ status: res.statusCode!, body: text, retryAfter: res.headers['retry-after'] }),
            );
          },
        );
        req.on('timeout', () => req.destroy(new Error('timeout')));
        req.on('error', reject);
        req.end(body);
      });

    /** A create retried the documented way: same key, after Retry-After (or 200 ms), until 201. */
    const create = async (client: number) => {
      const name = `Fleet ${client}-${created++}`;
      const body = JSON.stringify({ name, categoryId: 3 });
      const headers = { 'Content-Type': 'application/json', 'Idempotency-Key': name.replace(/ /g, '-') };
      let failedAt: number | undefined;
      for (let retry = false; ; retry = true) {
        const answer = await send('POST', '/v1/pets', headers, body).catch((error: Error) => error);
        const result = answer instanceof Error ? answer.message : answer.status;
        outcomes.push({ phase, op: 'create', result, retry });
        if (!(answer instanceof Error) && answer.status === 201) {
          const id = (JSON.parse(answer.body) as { id: number }).id;
          acknowledged.set(name, id);
          if (failedAt !== undefined) recoveries.push(Date.now() - failedAt);
          return id;
        }
        failedAt ??= Date.now();
        if (Date.now() - failedAt > 30_000) throw new Error(`create ${name} never succeeded: ${result}`);
        const wait = answer instanceof Error ? undefined : Number(answer.retryAfter);
        await sleep(wait ? wait * 1000 : 200);
      }
    };
    /** A change retried until answered: `If-Match: *` makes a repeat of a committed one no change. */
    const patch = async (id: number, categoryId: number) => {
      const headers = { 'Content-Type': 'application/merge-patch+json', 'If-Match': '*' };
      for (let retry = false; ; retry = true) {
        const answer = await send('PATCH', `/v1/pets/${id}`, headers, JSON.stringify({ categoryId })).catch(
          (error: Error) => error,
        );
        const result = answer instanceof Error ? answer.message : answer.status;
        outcomes.push({ phase, op: 'patch', result, retry });
        if (result === 200) return;
        const wait = answer instanceof Error ? undefined : Number(answer.retryAfter);
        await sleep(wait ? wait * 1000 : 200);
      }
    };
    const read = async (op: 'list' | 'get') => {
      const path = op === 'list' ? '/v1/pets?limit=10' : `/v1/pets/${1 + Math.floor(Math.random() * 50)}`;
      const answer = await send('GET', path).catch((error: Error) => error);
      outcomes.push({
        phase,
        op,
        result: answer instanceof Error ? answer.message : answer.status,
        retry: false,
      });
    };
    const client = async (id: number) => {
      for (let i = 0; running; i++) {
        const dice = Math.random();
        if (dice < 0.2) {
          const pet = await create(id);
          if (Math.random() < 0.5) await patch(pet, 4 + i);
        } else await read(dice < 0.65 ? 'list' : 'get');
      }
    };
    const clients = Array.from({ length: 12 }, (_, id) => client(id));

    const untilReady = async (service: RunningService) => {
      for (;;) {
        const probe = await fetch(`${service.url}/health/ready`).catch(() => undefined);
        if (probe?.status === 200) return;
        await sleep(50);
      }
    };
    const restart = async (index: number, signal: NodeJS.Signals) => {
      await stopService(instances[index], signal);
      instances[index] = await spawnService(apiEnv(index));
      await untilReady(instances[index]);
      // nginx counted the refused connections of the stop against the instance: it sends it
      // requests again once `fail_timeout` has passed (the documented procedure waits as long).
      await sleep(FAIL_TIMEOUT_MS + 500);
    };
    const restartWorker = async (index: number, signal: NodeJS.Signals) => {
      await stopService(workers[index], signal);
      workers[index] = await spawnService(workerEnv(index));
      await untilReady(workers[index]);
    };
    const during = async (name: Phase, fault: () => Promise<void>) => {
      phase = name;
      const from = Date.now();
      await fault();
      if (name === 'worker kill -9' || name === 'postgres restart') faults.push({ from, to: Date.now() });
      await sleep(2000);
      phase = 'steady';
      await sleep(500);
    };

    await sleep(2000);
    await during('rolling restart', async () => {
      for (let index = 0; index < instances.length; index++) await restart(index, 'SIGTERM');
      for (let index = 0; index < workers.length; index++) await restartWorker(index, 'SIGTERM');
    });
    /**
     * Kills worker 0 while the receiver holds one of its deliveries, unanswered. Worker 1 is paused
     * for that instant, so that the delivery is worker 0's; should worker 0 send nothing meanwhile
     * (it may wait on a row lock worker 1 holds), worker 1 resumes and it is tried again.
     */
    const killWorkerMidDelivery = async (): Promise<number> => {
      for (let tries = 0; tries < 5; tries++) {
        workers[1].child.kill('SIGSTOP');
        await sleep(100); // what worker 1 sent before it stopped has arrived
        const killedAt = await new Promise<number | undefined>((resolve) => {
          const timer = setTimeout(() => {
            onReceipt = undefined;
            resolve(undefined);
          }, 2000);
          onReceipt = () => {
            onReceipt = undefined;
            clearTimeout(timer);
            workers[0].child.kill('SIGKILL');
            resolve(Date.now());
          };
        });
        workers[1].child.kill('SIGCONT');
        if (killedAt !== undefined) return killedAt;
        await sleep(500);
      }
      throw new Error('worker 0 sent nothing while worker 1 was paused');
    };
    /** The deliveries a dead worker had claimed, left leased: the event of each, and when its lease ends. */
    const cutShort: Array<{ event: string; leaseEnds: number }> = [];

    // Early, so that what the killed worker had claimed is sent again during the phases after.
    await during('worker kill -9', async () => {
      const killedAt = await killWorkerMidDelivery();
      await restartWorker(0, 'SIGKILL');
      // Claimed in the seconds before the kill and still unrecorded (a retry is due sooner).
      const db = new Client({ connectionString: cluster.url });
      await db.connect();
      const { rows } = await db.query(
        `SELECT event_id, next_attempt_at FROM fleet.webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at > $1 AND next_attempt_at <= $2`,
        [killedAt + LEASE_MS - 10_000, killedAt + LEASE_MS],
      );
      await db.end();
      for (const row of rows as Array<{ event_id: string; next_attempt_at: string }>)
        cutShort.push({ event: eventId(Number(row.event_id)), leaseEnds: Number(row.next_attempt_at) });
    });
    await during('api kill -9', () => restart(1, 'SIGKILL'));
    await during('postgres restart', async () => {
      await cluster.stop(); // pg_ctl -m fast
      await cluster.start();
    });
    await during('redis restart', async () => {
      await redis.stop();
      await sleep(1000);
      await redis.start();
    });
    await during('receiver outage', async () => {
      receiverFailing = true;
      await sleep(4000);
      receiverFailing = false;
    });
    running = false;
    await Promise.all(clients);
    agent.destroy();

    const summary: Record<string, Record<string, number>> = {};
    for (const { phase: at, op, result, retry } of outcomes) {
      const key = `${op} ${result}${retry ? ' (retry)' : ''}`;
      summary[at] = { ...summary[at], [key]: (summary[at]?.[key] ?? 0) + 1 };
    }
    const db = new Client({ connectionString: cluster.url });
    await db.connect();
    const rows = (await db.query('SELECT id, name, version FROM fleet.pets')).rows as Array<{
      id: string;
      name: string;
      version: string;
    }>;
    const events = (await db.query('SELECT id, type, at, data FROM fleet.events ORDER BY id')).rows as Array<{
      id: string;
      type: string;
      at: string;
      data: string;
    }>;
    await db.end();
    const published = eventsPublished(events, rows);
    const delivered = await webhookDeliveries(events);
    // The one the receiver took as worker 0 died already has its 200: it is sent again all the same.
    const notResent = () =>
      cutShort.filter(
        ({ event, leaseEnds }) =>
          !receiver.received.some(
            (r) => r.headers['webhook-id'] === event && r.status === 200 && r.at >= leaseEnds,
          ),
      );
    const resendBy = Math.max(0, ...cutShort.map(({ leaseEnds }) => leaseEnds)) + 30_000;
    while (notResent().length > 0 && Date.now() < resendBy) await sleep(250);
    const streamed = await jetStreamIds(env.EVENTS_NATS_URL, events.length);
    // Each process since its last start: the API instances' through every phase from theirs on.
    const attempts = {
      api: await Promise.all(
        apis.map(({ metricsPort }) => deliveryAttempts(`http://127.0.0.1:${metricsPort}/metrics`)),
      ),
      workers: await Promise.all(workers.map((worker) => deliveryAttempts(`${worker.url}/metrics`))),
    };
    const stored = new Map<string, number[]>();
    for (const row of rows) stored.set(row.name, [...(stored.get(row.name) ?? []), Number(row.id)]);
    const lost = [...acknowledged].filter(([name, id]) => !stored.get(name)?.includes(id));
    const duplicated = [...stored].filter(([, ids]) => ids.length > 1);
    console.log(
      JSON.stringify(
        {
          requestsByPhase: summary,
          acknowledgedCreates: acknowledged.size,
          rows: rows.length,
          lost: lost.length,
          duplicated: duplicated.length,
          slowestRetriedCreateMs: Math.max(0, ...recoveries),
          nginxErrors: readFileSync(join(dir, 'error.log'), 'utf8').split('\n').filter(Boolean).length,
          events: events.length,
          eventsNotMatchingChanges: published.length,
          webhooks: delivered.summary,
          webhookAttemptsByProcess: attempts,
          cutShortByWorkerKill: cutShort.length,
          jetStream: { messages: streamed.length, distinctIds: new Set(streamed).size },
        },
        null,
        1,
      ),
    );

    const ok = (result: number | string) => result === 200 || result === 201 || result === 404;
    const errors = (at: Phase) => outcomes.filter((o) => o.phase === at && !ok(o.result));
    for (const at of [
      'steady',
      'rolling restart',
      'worker kill -9',
      'postgres restart',
      'redis restart',
      'receiver outage',
    ] as const)
      expect({ phase: at, errors: errors(at) }).toEqual({ phase: at, errors: [] });
    // The API kill: only creates in flight on the killed instance (nginx does not retry a POST it
    // sent: 502, or no answer at all), then their retries (409 while the dead claim's lease runs).
    expect(
      errors('api kill -9').filter(
        (o) =>
          !(
            (o.op === 'create' || o.op === 'patch') &&
            (o.result === 502 || typeof o.result === 'string' || (o.retry && o.result === 409))
          ),
      ),
    ).toEqual([]);
    expect(Math.max(0, ...recoveries)).toBeLessThan(5000);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(rows.length).toBe(acknowledged.size);
    expect(published).toEqual([]);
    expect(delivered.undelivered).toEqual([]);
    expect(delivered.unexplainedDuplicates).toEqual([]);
    expect(delivered.late).toEqual([]);
    expect(cutShort.length).toBeGreaterThan(0);
    expect(notResent()).toEqual([]);
    expect([...streamed].sort()).toEqual(events.map((event) => eventId(Number(event.id))).sort());
    expect(attempts.api).toEqual(apis.map(() => 0));
  }, 300_000);

  /** For each pet, one `pet.created` and one `pet.updated` per later version, with that version: what is wrong. */
  function eventsPublished(
    events: Array<{ type: string; data: string }>,
    pets: Array<{ id: string; version: string }>,
  ): string[] {
    const versions = new Map<number, string[]>();
    for (const { type, data } of events) {
      const { id, version } = JSON.parse(data) as { id: number; version: number };
      versions.set(id, [...(versions.get(id) ?? []), `${type} ${version}`]);
    }
    return pets
      .map(({ id, version }) => {
        const expected = ['pet.created 1'];
        for (let v = 2; v <= Number(version); v++) expected.push(`pet.updated ${v}`);
        const seen = versions.get(Number(id)) ?? [];
        return JSON.stringify(seen) === JSON.stringify(expected)
          ? undefined
          : `pet ${id}: ${seen.join(', ')}`;
      })
      .filter((problem): problem is string => problem !== undefined);
  }

  /**
   * Waits until the receiver answered 2xx to every event. A second receipt of an event is
   * explained by a failure: an earlier receipt answered 500, or one that came during a fault
   * that can end an attempt before it is recorded (the kill, the database restart).
   */
  async function webhookDeliveries(events: Array<{ id: string; at: string }>) {
    const byId = () => {
      const receipts = new Map<string, typeof receiver.received>();
      for (const receipt of receiver.received) {
        const id = String(receipt.headers['webhook-id']);
        receipts.set(id, [...(receipts.get(id) ?? []), receipt]);
      }
      return receipts;
    };
    // The receipts indexed once per check: per event, the check starved the receiver (this process).
    const undelivered = () => {
      const receipts = byId();
      return events
        .map((event) => eventId(Number(event.id)))
        .filter((id) => !receipts.get(id)?.some((r) => r.status === 200));
    };
    // An event claimed by an attempt cut short waits for its lease, then for its retries.
    const deadline = Date.now() + RETRY_SCHEDULE.reduce((sum, ms) => sum + ms, 0) + LEASE_MS + 30_000;
    while (undelivered().length > 0 && Date.now() < deadline) await sleep(250);
    const receipts = byId();
    const unexplainedDuplicates = [...receipts]
      .filter(([, all]) => all.length > 1)
      .filter(([, all]) => !all.slice(0, -1).some((r) => r.status !== 200 || faultAt(r.at)))
      .map(([id]) => id);
    // Within the schedule: the sum of its waits, the lease of an attempt cut short, and slack.
    const bound = RETRY_SCHEDULE.reduce((sum, ms) => sum + ms, 0) * 1.1 + LEASE_MS + 15_000;
    const late = events
      .map((event) => {
        const first = receipts.get(eventId(Number(event.id)))?.find((r) => r.status === 200);
        return first && first.at - Number(event.at) > bound
          ? `${eventId(Number(event.id))} ${first.at - Number(event.at)} ms`
          : undefined;
      })
      .filter((problem) => problem !== undefined);
    const summary = {
      receipts: receiver.received.length,
      answered500: receiver.received.filter((r) => r.status !== 200).length,
      eventsReceivedMoreThanOnce: [...receipts.values()].filter((all) => all.length > 1).length,
      slowestMs: Math.max(
        0,
        ...events.map(
          (event) =>
            (receipts.get(eventId(Number(event.id)))?.find((r) => r.status === 200)?.at ?? 0) -
            Number(event.at),
        ),
      ),
    };
    return { undelivered: undelivered(), unexplainedDuplicates, late, summary };
  }

  /** Webhook attempts (of any result) a process counted since it started, read from its `/metrics`. */
  async function deliveryAttempts(url: string): Promise<number> {
    const metrics = await fetch(url);
    if (metrics.status !== 200) throw new Error(`${url}: ${metrics.status}`);
    const counted = [
      ...(await metrics.text()).matchAll(/^petstore_webhook_attempts_total\{[^}]*\} (\S+)$/gm),
    ];
    if (counted.length === 0) throw new Error(`${url}: no petstore_webhook_attempts_total`);
    return counted.reduce((sum, [, value]) => sum + Number(value), 0);
  }

  /** The `Nats-Msg-Id` of every message of the stream, once it holds `count` (or after 30 s). */
  async function jetStreamIds(url: string, count: number): Promise<string[]> {
    const connection = await connect({ servers: url });
    try {
      const manager = await connection.jetstreamManager();
      let last = 0;
      for (let i = 0; i < 120; i++) {
        const info = await manager.streams.info('PETSTORE_EVENTS').catch(() => undefined);
        last = info?.state.last_seq ?? 0;
        if ((info?.state.messages ?? 0) >= count) break;
        await sleep(250);
      }
      const ids: string[] = [];
      for (let seq = 1; seq <= last; seq++) {
        const message = await manager.streams.getMessage('PETSTORE_EVENTS', { seq }).catch(() => undefined);
        if (message) ids.push(message.header.get('Nats-Msg-Id'));
      }
      return ids;
    } finally {
      await connection.close();
    }
  }
});
