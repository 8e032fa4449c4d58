import { randomBytes } from 'node:crypto';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import type { App } from 'supertest/types';
import { AUTH, startApp, TEST_DATABASE_URL, TEST_KEY } from './support/app';
import { exitOf, RunningService, spawnService, stopService } from './support/process';
import {
  CuttingProxy,
  postgresBinaries,
  PostgresCluster,
  startCuttingProxy,
  startPostgresCluster,
} from './support/servers';

/**
 * A real PostgreSQL server going away under the service: a cluster of the test's own (initdb +
 * pg_ctl on a spare port), stopped and started while requests run, and a proxy that loses the
 * answer to a COMMIT. The machine's shared server is never touched.
 */
const bin = postgresBinaries();
// It brings its own server, so it runs once, in the default pass (not again under TEST_DATABASE_URL).
const inThisPass = !TEST_DATABASE_URL;
const SCHEMA = 'outage';

const UNAVAILABLE = {
  code: 'service_unavailable',
  message: 'The service is temporarily unavailable.',
  status: 503,
};

if (!bin && inThisPass) {
  // CI installs PostgreSQL; without its binaries these tests cannot run at all.
  it('needs the PostgreSQL server binaries (/usr/lib/postgresql/*/bin)', () => {
    if (process.env.CI) throw new Error('PostgreSQL binaries are missing: apt-get install -y postgresql');
    console.warn('skipped: no PostgreSQL binaries under /usr/lib/postgresql');
  });
}

const describeWithPostgres = bin && inThisPass ? describe : describe.skip;

async function rows(
  cluster: PostgresCluster,
  sql: string,
  params: unknown[] = [],
): Promise<Record<string, unknown>[]> {
  const client = new Client({ connectionString: cluster.url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describeWithPostgres('PostgreSQL going away under one instance (e2e)', () => {
  let cluster: PostgresCluster;
  let proxy: CuttingProxy;
  let app: NestExpressApplication;
  let http: App;

  beforeAll(async () => {
    cluster = await startPostgresCluster(bin!);
    proxy = await startCuttingProxy(cluster.port);
    app = await startApp({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${proxy.port}/postgres`,
      DATABASE_SCHEMA: SCHEMA,
      READ_CACHE_SIZE: '0',
      // The subject here is the 503 of an outage longer than the wait for a database.
      DB_OUTAGE_WAIT_MS: '300',
    });
    http = app.getHttpServer();
  }, 60000);

  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    cluster?.destroy();
  });

  const create = (name: string, key: string) =>
    request(http).post('/v1/pets').set(AUTH).set('Idempotency-Key', key).send({ name, categoryId: 3 });
  const named = (name: string) => rows(cluster, `SELECT id FROM ${SCHEMA}.pets WHERE name = $1`, [name]);

  it('a create whose COMMIT answer is lost answers 503; its retry with the same key gets the original 201', async () => {
    proxy.cutAfterNextCommit();
    const lost = await create('Committed', 'lost-answer');
    expect(lost.status).toBe(503);
    expect(lost.body).toEqual(UNAVAILABLE);
    expect(lost.headers['retry-after']).toBe('2');

    // The server did commit: the animal and its key's response went in one transaction.
    const stored = await named('Committed');
    expect(stored).toHaveLength(1);

    const retry = await create('Committed', 'lost-answer');
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual({ id: Number(stored[0].id), name: 'Committed', categoryId: 3 });
    expect(await named('Committed')).toHaveLength(1);
  });

  it('a connection the server ends in the packet that opens it is a 503, never an uncaught error', async () => {
    proxy.endNewConnections(true);
    try {
      const ended = await create('Ended at connect', 'ended-at-connect');
      expect({ status: ended.status, body: ended.body as unknown }).toEqual({
        status: 503,
        body: UNAVAILABLE,
      });
    } finally {
      proxy.endNewConnections(false);
    }
    expect((await create('Ended at connect', 'ended-at-connect')).status).toBe(201);
    expect(await named('Ended at connect')).toHaveLength(1);
  });

  it('during an outage: 503 with Retry-After for every operation, readiness 503, liveness 200; then recovers', async () => {
    // A create waiting for the insert lock when the server shuts down: it never commits.
    const holder = new Client({ connectionString: cluster.url });
    await holder.connect();
    holder.on('error', () => undefined);
    await holder.query('SELECT pg_advisory_lock(7348214902)');
    const blocked = create('Interrupted', 'interrupted');
    await sleep(300);

    const stopping = Date.now();
    await cluster.stop();
    const interrupted = await blocked;
    expect(interrupted.status).toBe(503);
    expect(interrupted.body).toEqual(UNAVAILABLE);

    for (const send of [
      () => request(http).get('/v1/pets').set(AUTH),
      () => request(http).get('/v1/pets/1').set(AUTH),
      () => request(http).post('/v1/pets').set(AUTH).send({ name: 'Down', categoryId: 1 }),
      () => create('Interrupted', 'interrupted'),
      () => create('Claimed while down', 'while-down'),
    ]) {
      const res = await send();
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(res.headers['retry-after']).toBe('2');
    }
    const ready = await request(http).get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers['retry-after']).toBe('2');
    expect(ready.body).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(Date.now() - stopping).toBeLessThan(5000);
    expect((await request(http).get('/health/live')).status).toBe(200);

    await cluster.start();
    const back = Date.now();
    let readyAgain = await request(http).get('/health/ready');
    while (readyAgain.status !== 200 && Date.now() - back < 5000) {
      await sleep(100);
      readyAgain = await request(http).get('/health/ready');
    }
    expect(readyAgain.status).toBe(200);

    // The keys of the failed creates do not block their retries (no 409), and each retry
    // creates exactly one animal.
    for (const [name, key] of [
      ['Interrupted', 'interrupted'],
      ['Claimed while down', 'while-down'],
    ]) {
      const retry = await create(name, key);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await named(name)).toHaveLength(1);
      expect((await create(name, key)).headers['idempotent-replayed']).toBe('true');
    }
    expect(await named('Down')).toHaveLength(0);
    expect((await request(http).get('/v1/pets?limit=100').set(AUTH)).status).toBe(200);
  }, 30000);
});

describeWithPostgres('A database blink under one instance, with the default wait (e2e)', () => {
  let cluster: PostgresCluster;
  let app: NestExpressApplication;
  let http: App;

  beforeAll(async () => {
    cluster = await startPostgresCluster(bin!);
    app = await startApp({ DATABASE_URL: cluster.url, DATABASE_SCHEMA: 'blink', READ_CACHE_SIZE: '0' });
    http = app.getHttpServer();
  }, 60000);

  afterAll(async () => {
    await app?.close();
    cluster?.destroy();
  });

  it('a PostgreSQL restart under load is invisible: every request waits for it and succeeds', async () => {
    let running = true;
    const statuses: Record<string, number> = {};
    let created = 0;
    const worker = async (id: number) => {
      for (let i = 0; running; i++) {
        const send =
          i % 3 === 0
            ? request(http)
                .post('/v1/pets')
                .set(AUTH)
                .set('Idempotency-Key', `blink-${id}-${i}`)
                .send({ name: `Blink ${id}-${i}`, categoryId: 2 })
            : i % 3 === 1
              ? request(http)
                  .post('/v1/pets')
                  .set(AUTH)
                  .send({ name: `Plain ${id}-${i}`, categoryId: 2 })
              : request(http).get('/v1/pets?limit=5').set(AUTH);
        const res = await send;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 201) created++;
      }
    };
    const workers = Array.from({ length: 8 }, (_, id) => worker(id));
    await sleep(500);
    const stopping = Date.now();
    await cluster.stop(); // pg_ctl -m fast: every session is terminated
    await cluster.start();
    const downForMs = Date.now() - stopping;
    await sleep(1000);
    running = false;
    await Promise.all(workers);
    console.log(JSON.stringify({ downForMs, statuses }));
    expect(downForMs).toBeLessThan(2000);
    expect(Object.keys(statuses)).toEqual(['200', '201']);
    const stored = await rows(cluster, 'SELECT count(*)::int AS n FROM blink.pets');
    expect(stored[0].n).toBe(created);
  }, 60000);

  it('a longer outage answers 503 after about DB_OUTAGE_WAIT_MS (2 s), not at once and not later', async () => {
    await cluster.stop();
    try {
      for (const send of [
        () => request(http).get('/v1/pets').set(AUTH),
        () => request(http).post('/v1/pets').set(AUTH).send({ name: 'Waits', categoryId: 1 }),
        () =>
          request(http)
            .post('/v1/pets')
            .set(AUTH)
            .set('Idempotency-Key', 'waits')
            .send({ name: 'Waits', categoryId: 1 }),
      ]) {
        const started = Date.now();
        const res = await send();
        const took = Date.now() - started;
        expect(res.status).toBe(503);
        expect(took).toBeGreaterThanOrEqual(1800);
        expect(took).toBeLessThan(3500);
      }
    } finally {
      await cluster.start();
    }
  }, 60000);
});

interface Outcome {
  at: number;
  instance: number;
  op: 'create' | 'list' | 'get' | 'ready';
  status: number | 'network';
  retryAfter?: string;
  code?: string;
}

describeWithPostgres('Soak: two instances, mixed load, three PostgreSQL restarts (e2e)', () => {
  let cluster: PostgresCluster;
  const services: RunningService[] = [];

  beforeAll(async () => {
    cluster = await startPostgresCluster(bin!);
    const env = {
      DATABASE_URL: cluster.url,
      DATABASE_SCHEMA: 'soak',
      API_KEYS: TEST_KEY,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      SHUTDOWN_TIMEOUT_MS: '3000',
      SHUTDOWN_DRAIN_MS: '500',
      // Outages (1.5 s) longer than the wait for a database: the 503 path is what is tested.
      DB_OUTAGE_WAIT_MS: '500',
    };
    services.push(...(await Promise.all([spawnService(env), spawnService(env)])));
  }, 60000);

  afterAll(async () => {
    await Promise.all(services.map((service) => stopService(service, 'SIGKILL')));
    cluster?.destroy();
  });

  it('answers 503 with Retry-After (never 500), loses no acknowledged create, and recovers within 5 s of each restart', async () => {
    const outcomes: Outcome[] = [];
    const acknowledged = new Map<string, { id: number; name: string; categoryId: number }>();
    const keyed = new Map<string, { key: string; body: { name: string; categoryId: number } }>();
    let running = true;
    let serial = 0;
    const call = async (instance: number, op: Outcome['op'], path: string, init: RequestInit = {}) => {
      const at = Date.now();
      try {
        const res = await fetch(`${services[instance].url}${path}`, {
          ...init,
          headers: {
            ...AUTH,
            'Content-Type': 'application/json',
            ...(init.headers as Record<string, string>),
          },
          signal: AbortSignal.timeout(10000),
        });
        const body = (await res.json()) as Record<string, unknown>;
        outcomes.push({
          at,
          instance,
          op,
          status: res.status,
          retryAfter: res.headers.get('retry-after') ?? undefined,
          code: typeof body.code === 'string' ? body.code : undefined,
        });
        return { status: res.status, body };
      } catch {
        outcomes.push({ at, instance, op, status: 'network' });
        return { status: 0, body: {} };
      }
    };

    const worker = async (id: number) => {
      let pending: { key: string; body: { name: string; categoryId: number } } | undefined;
      for (let turn = 0; running; turn++) {
        const instance = (id + turn) % 2;
        const dice = Math.random();
        if (pending || dice < 0.5) {
          // Half of the creates carry an Idempotency-Key and are retried with it until they succeed.
          const n = ++serial;
          const item = pending ?? {
            key: Math.random() < 0.5 ? `soak-${n}-${randomBytes(4).toString('hex')}` : '',
            body: { name: `soak-${n}`, categoryId: n },
          };
          const headers: Record<string, string> = item.key ? { 'Idempotency-Key': item.key } : {};
          const res = await call(instance, 'create', '/v1/pets', {
            method: 'POST',
            body: JSON.stringify(item.body),
            headers,
          });
          if (res.status === 201) {
            acknowledged.set(item.body.name, res.body as { id: number; name: string; categoryId: number });
            if (item.key) keyed.set(item.body.name, item);
            pending = undefined;
          } else {
            pending = item.key ? item : undefined;
          }
        } else if (dice < 0.75) {
          await call(instance, 'list', '/v1/pets?limit=20');
        } else {
          await call(
            instance,
            'get',
            `/v1/pets/${1 + Math.floor(Math.random() * Math.max(1, acknowledged.size))}`,
          );
        }
        const last = outcomes[outcomes.length - 1];
        if (last.status !== 200 && last.status !== 201 && last.status !== 404) await sleep(100);
      }
      return pending;
    };
    const probe = async () => {
      while (running) {
        await Promise.all([0, 1].map((instance) => call(instance, 'ready', '/health/ready')));
        await sleep(100);
      }
    };

    const workers = Array.from({ length: 6 }, (_, id) => worker(id));
    const prober = probe();
    const restarts: { stopAt: number; downAt: number; upAt: number }[] = [];
    await sleep(1500);
    for (let round = 0; round < 3; round++) {
      const stopAt = Date.now();
      await cluster.stop();
      const downAt = Date.now();
      await sleep(1500);
      await cluster.start();
      restarts.push({ stopAt, downAt, upAt: Date.now() });
      await sleep(2500);
    }
    running = false;
    const leftOver = (await Promise.all(workers)).filter((item) => item !== undefined);
    await prober;
    // Keyed creates still unanswered at the end are retried now, as a client would.
    for (const item of leftOver) {
      const res = await call(0, 'create', '/v1/pets', {
        method: 'POST',
        body: JSON.stringify(item.body),
        headers: { 'Idempotency-Key': item.key },
      });
      expect(res.status).toBe(201);
      acknowledged.set(item.body.name, res.body as { id: number; name: string; categoryId: number });
      keyed.set(item.body.name, item);
    }

    // Every failure is a 503 with Retry-After; nothing else went wrong.
    const byStatus: Record<string, number> = {};
    for (const outcome of outcomes)
      byStatus[`${outcome.op} ${outcome.status}`] = (byStatus[`${outcome.op} ${outcome.status}`] ?? 0) + 1;
    const failures = outcomes.filter((outcome) => ![200, 201, 404].includes(outcome.status as number));
    // A keyed create retried on the other instance right after the database returns may find
    // its key still in flight for a moment (409), until the instance that failed it releases it.
    const conflicts = failures.filter(
      (outcome) => outcome.status === 409 && outcome.code === 'idempotency_conflict',
    );
    const unexpected = failures.filter(
      (outcome) =>
        !conflicts.includes(outcome) &&
        (outcome.status !== 503 || outcome.retryAfter !== '2' || outcome.code !== 'service_unavailable'),
    );

    // Every acknowledged animal is in the database, unchanged; every keyed create exactly once.
    const stored = await rows(cluster, 'SELECT id, name, category_id FROM soak.pets');
    const storedByName = new Map<string, Record<string, unknown>[]>();
    for (const row of stored)
      storedByName.set(String(row.name), [...(storedByName.get(String(row.name)) ?? []), row]);
    const lost = [...acknowledged.values()].filter(
      (pet) =>
        !storedByName
          .get(pet.name)
          ?.some((row) => Number(row.id) === pet.id && Number(row.category_id) === pet.categoryId),
    );
    const duplicatedKeyed = [...keyed.keys()].filter((name) => storedByName.get(name)?.length !== 1);

    // Readiness: 503 during each outage, and how long until each instance served again.
    const report = restarts.map((restart, round) => {
      const perInstance = [0, 1].map((instance) => {
        const mine = outcomes.filter((outcome) => outcome.instance === instance);
        const firstNotReady = mine.find(
          (o) => o.op === 'ready' && o.at >= restart.stopAt && o.status === 503,
        );
        const readyAgain = mine.find((o) => o.op === 'ready' && o.at >= restart.upAt && o.status === 200);
        const servedAgain = mine.find((o) => o.op !== 'ready' && o.at >= restart.upAt && o.status !== 503);
        return {
          notReadyAfterMs: firstNotReady ? firstNotReady.at - restart.stopAt : undefined,
          readyAgainAfterMs: readyAgain ? readyAgain.at - restart.upAt : undefined,
          servingAgainAfterMs: servedAgain ? servedAgain.at - restart.upAt : undefined,
        };
      });
      return { round: round + 1, downForMs: restart.upAt - restart.downAt, instances: perInstance };
    });
    console.log(
      JSON.stringify(
        {
          requestsByStatus: byStatus,
          acknowledgedCreates: acknowledged.size,
          acknowledgedFound: acknowledged.size - lost.length,
          keyedCreates: keyed.size,
          restarts: report,
        },
        null,
        1,
      ),
    );

    const errorLines = services.flatMap((service) =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":"error"') || line.includes('"level":"fatal"')),
    );
    expect({ unexpected, errorLines }).toEqual({ unexpected: [], errorLines: [] });
    expect(conflicts.length).toBeLessThan(outcomes.filter((outcome) => outcome.op === 'create').length / 20);
    expect(lost).toEqual([]);
    expect(duplicatedKeyed).toEqual([]);
    expect(failures.length).toBeGreaterThan(0); // the outages were seen
    for (const { instances } of report) {
      for (const instance of instances) {
        expect(instance.notReadyAfterMs).toBeDefined();
        expect(instance.notReadyAfterMs!).toBeLessThan(2000);
        expect(instance.readyAgainAfterMs).toBeDefined();
        expect(instance.readyAgainAfterMs!).toBeLessThanOrEqual(5000);
        expect(instance.servingAgainAfterMs).toBeDefined();
        expect(instance.servingAgainAfterMs!).toBeLessThanOrEqual(5000);
      }
    }

    // The logs: warnings, never an error line or a stack.
    for (const service of services) {
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines.filter((line) => ['error', 'fatal', 50, 60].includes(line.level as string))).toEqual([]);
      expect(service.output()).not.toMatch(/\n\s+at /);
      expect(lines.some((line) => String(line.msg).startsWith('database unavailable, answering 503'))).toBe(
        true,
      );
    }

    // Graceful shutdown while the database is down still exits 0, within its timeout.
    await cluster.stop();
    const stopping = Date.now();
    const exits = services.map((service) => exitOf(service));
    for (const service of services) service.child.kill('SIGTERM');
    for (const exit of await Promise.all(exits)) expect(exit.code).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(3000 + 2000);
  }, 60000);
});
