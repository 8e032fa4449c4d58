import { PerformanceObserver } from 'node:perf_hooks';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { Metrics } from '../src/observability/metrics';
import { MetricsListener } from '../src/observability/metrics-listener';
import { AUTH, startApp, tempDir, TEST_DATABASE_URL } from './support/app';

const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const available = existsSync(PROMETHEUS) && existsSync(PROMTOOL);
if (!available && !process.env.CI) {
  console.warn(
    `Skipping the Prometheus tests: no ${PROMETHEUS} or ${PROMTOOL}. Install them with: apt-get install -y prometheus`,
  );
}
// In CI a missing Prometheus is a failure, not a skip.
const describeWithPrometheus = available || process.env.CI ? describe : describe.skip;

async function scrape(app: NestExpressApplication): Promise<string> {
  const url = app.get(MetricsListener).url();
  if (!url) throw new Error('no metrics listener');
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The value of one sample in the text format, e.g. `petstore_auth_failures_total{reason="missing"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * Allocates short-lived garbage until the collector has run at least once, and lets the GC
 * observer hear of it: the GC histogram has a sample only once a collection happened after the
 * metrics started, which a short test may not cause by itself.
 */
async function garbageCollected(): Promise<void> {
  let collected = false;
  const observer = new PerformanceObserver(() => (collected = true));
  observer.observe({ entryTypes: ['gc'] });
  try {
    for (let round = 0; round < 200 && !collected; round++) {
      // About 1 MB of arrays, garbage at once.
      Array.from({ length: 20_000 }, (_, i) => [i, i]);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    observer.disconnect();
  }
  expect(collected).toBe(true);
}
describe('metrics off (no METRICS_PORT)', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await startApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('keeps no metrics and opens no listener; /metrics on the API port is 404', async () => {
    expect(app.get(Metrics).enabled).toBe(false);
    expect(app.get(MetricsListener).url()).toBeUndefined();
    const response = await request(app.getHttpServer()).get('/metrics').set(AUTH);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });
});

describe('metrics on (METRICS_PORT=0)', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await startApp({ METRICS_PORT: '0' });
  });

  afterAll(async () => {
    await app.close();
  });

  it('listen on 127.0.0.1 by default, serve only /metrics, and never on the API port', async () => {
    expect(app.get(MetricsListener).url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const base = app
      .get(MetricsListener)
      .url()!
      .replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
    expect((await request(app.getHttpServer()).get('/metrics').set(AUTH)).status).toBe(404);
  });

  it('time requests by route pattern, never by URL, and count by status', async () => {
    const http = app.getHttpServer();
    const series = (labels: string) => `http_server_request_duration_seconds_count{${labels}}`;
    const unmatched = series('method="GET",route="unmatched",status_code="404"');
    const unmatchedBefore = sample(await scrape(app), unmatched) ?? 0;
    const created = await request(http).post('/v1/pets').set(AUTH).send({ name: 'Rex', categoryId: 1 });
    for (const id of [created.body.id, 999999, 'abc']) await request(http).get(`/v1/pets/${id}`).set(AUTH);
    await request(http).get('/no/such/path').set(AUTH);
    const text = await scrape(app);
    expect(sample(text, series('method="POST",route="/v1/pets",status_code="201"'))).toBe(1);
    expect(sample(text, series('method="GET",route="/v1/pets/:petId",status_code="200"'))).toBe(1);
    expect(sample(text, series('method="GET",route="/v1/pets/:petId",status_code="404"'))).toBe(1);
    expect(sample(text, series('method="GET",route="/v1/pets/:petId",status_code="400"'))).toBe(1);
    expect(sample(text, unmatched)).toBe(unmatchedBefore + 1);
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((match) => match[1]));
    expect([...routes].sort()).toEqual(['/v1/pets', '/v1/pets/:petId', 'unmatched']);
    expect(sample(text, 'http_server_active_requests')).toBe(0);
  });

  it('count authentication failures by reason, idempotency replays and conflicts, read-cache lookups', async () => {
    const http = app.getHttpServer();
    const keys = app.get(ApiKeysService);
    const { key: revoked } = await keys.create('to-revoke');
    await keys.revoke(revoked.slice(0, 12));
    await request(http).get('/v1/pets');
    await request(http).get('/v1/pets').set('Authorization', 'Bearer unknown-key-0123456789abcdef');
    await request(http).get('/v1/pets').set('Authorization', 'Bearer');
    await request(http).get('/v1/pets').set('Authorization', `Bearer ${revoked}`);

    const create = (body: object) =>
      request(http).post('/v1/pets').set(AUTH).set('Idempotency-Key', 'metrics-key-1').send(body);
    expect((await create({ name: 'Once', categoryId: 2 })).status).toBe(201);
    expect((await create({ name: 'Once', categoryId: 2 })).status).toBe(201);
    expect((await create({ name: 'Other', categoryId: 2 })).status).toBe(422);

    const id = (await request(http).post('/v1/pets').set(AUTH).send({ name: 'Cached', categoryId: 5 })).body
      .id;
    await request(http).get(`/v1/pets/${id}`).set(AUTH);
    await request(http).get(`/v1/pets/${id}`).set(AUTH);
    await garbageCollected();

    const text = await scrape(app);
    expect(sample(text, 'petstore_auth_failures_total{reason="missing"}')).toBe(1);
    expect(sample(text, 'petstore_auth_failures_total{reason="invalid"}')).toBe(2);
    expect(sample(text, 'petstore_auth_failures_total{reason="revoked"}')).toBe(1);
    expect(sample(text, 'petstore_idempotency_replays_total')).toBe(1);
    expect(sample(text, 'petstore_idempotency_conflicts_total{reason="body_mismatch"}')).toBe(1);
    expect(sample(text, 'petstore_idempotency_conflicts_total{reason="in_flight"}')).toBe(0);
    expect(
      sample(text, 'petstore_read_cache_lookups_total{cache="row",result="hit"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sample(text, 'petstore_read_cache_lookups_total{cache="row",result="miss"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'petstore_rate_limited_total{limit="per_key"}')).toBe(0);
    expect(text).toMatch(/^petstore_build_info\{version="1\.0\.0",nodejs_version="v\d+\.\d+\.\d+"\} 1$/m);
    for (const name of [
      'nodejs_eventloop_lag_seconds',
      'nodejs_gc_duration_seconds_count',
      'nodejs_heap_size_used_bytes',
      'nodejs_active_handles',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
    }
    if (TEST_DATABASE_URL) {
      expect(text).toMatch(/^db_client_query_errors_total\{db_system="postgresql"\} \d+$/m);
      expect(text).toMatch(/^db_client_connections_max 10$/m);
      expect(text).toMatch(/^db_client_connections\{state="used"\} \d+$/m);
      expect(text).toMatch(/^db_client_connections_pending_requests 0$/m);
    } else {
      expect(text).toMatch(/^db_client_query_errors_total\{db_system="sqlite"\} \d+$/m);
      expect(text).not.toContain('db_client_connections');
    }
    expect(text).not.toContain(revoked);
  });

  describeWithPrometheus('checked by Prometheus tools', () => {
    it('pass promtool check metrics', async () => {
      const text = await scrape(app);
      const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(`${check.stdout}${check.stderr}`).toBe('');
      expect(check.status).toBe(0);
    });
  });
});

describe('rate-limit refusals', () => {
  it('are counted per limit', async () => {
    const app = await startApp({ METRICS_PORT: '0', RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '2' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await request(app.getHttpServer()).get('/v1/pets').set(AUTH)).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(sample(await scrape(app), 'petstore_rate_limited_total{limit="per_key"}')).toBe(1);
    } finally {
      await app.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

describeWithPrometheus('scraped by a real Prometheus server', () => {
  let app: NestExpressApplication;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let output = '';
  const dir = tempDir();

  beforeAll(async () => {
    app = await startApp({ METRICS_PORT: '0' });
    const target = new URL(app.get(MetricsListener).url()!);
    const port = await freePort();
    prometheusUrl = `http://127.0.0.1:${port}`;
    const config = join(dir.path, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: petstore',
        '    metrics_path: /metrics',
        '    static_configs:',
        `      - targets: ['${target.host}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir.path, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    prometheus.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  });

  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await app?.close();
    dir.cleanup();
  });

  async function query(promql: string): Promise<PromResult[]> {
    const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await response.json()) as { status: string; data: { result: PromResult[] } };
    expect(body.status).toBe('success');
    return body.data.result;
  }

  /** Asks Prometheus until the answer satisfies `done` (it scrapes every second). */
  async function eventually(promql: string, done: (result: PromResult[]) => boolean): Promise<PromResult[]> {
    const deadline = Date.now() + 30000;
    let last: PromResult[] = [];
    while (Date.now() < deadline) {
      if (prometheus?.exitCode !== null) throw new Error(`prometheus exited:\n${output}`);
      last = await query(promql).catch(() => []);
      if (done(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(
      `Prometheus never answered ${promql} as expected; last: ${JSON.stringify(last)}\n${output}`,
    );
  }

  it('finds the request histogram of /v1/pets with the counts of the requests made', async () => {
    const http = app.getHttpServer();
    for (let i = 0; i < 5; i++) expect((await request(http).get('/v1/pets').set(AUTH)).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect(
        (
          await request(http)
            .post('/v1/pets')
            .set(AUTH)
            .send({ name: `P${i}`, categoryId: 1 })
        ).status,
      ).toBe(201);
    expect((await request(http).get('/v1/pets')).status).toBe(401);

    const counts = await eventually(
      'http_server_request_duration_seconds_count{job="petstore",route="/v1/pets"}',
      (result) => result.length === 3,
    );
    const byLabels = Object.fromEntries(
      counts.map(({ metric, value }) => [`${metric.method} ${metric.status_code}`, Number(value[1])]),
    );
    expect(byLabels).toEqual({ 'GET 200': 5, 'POST 201': 2, 'GET 401': 1 });

    const buckets = await query(
      'http_server_request_duration_seconds_bucket{job="petstore",route="/v1/pets",method="GET",status_code="200"}',
    );
    expect(buckets.find(({ metric }) => metric.le === '+Inf')?.value[1]).toBe('5');
    expect(buckets.length).toBe(15);
    const p99 = await query(
      'histogram_quantile(0.99, sum by (le, route) (rate(http_server_request_duration_seconds_bucket{job="petstore"}[1m])))',
    );
    expect(Array.isArray(p99)).toBe(true);
    expect(await query('petstore_auth_failures_total{job="petstore",reason="missing"}')).toEqual([
      expect.objectContaining({ value: [expect.any(Number), '1'] }),
    ]);
    expect(await query('up{job="petstore"}')).toEqual([
      expect.objectContaining({ value: [expect.any(Number), '1'] }),
    ]);
  }, 60000);
});
