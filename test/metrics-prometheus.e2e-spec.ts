import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { MetricsListener } from '../src/observability/metrics-listener';
import { AUTH, startApp, tempDir } from './support/app';
import { garbageCollected, sample, scrape } from './support/metrics';
import { sparePort } from './support/ports';

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

interface PromResult {
  metric: Record<string, string>;
  value: [number, string];
}

describeWithPrometheus('Metrics scraped by a real Prometheus server and checked by promtool (e2e)', () => {
  let app: NestExpressApplication;
  let prometheus: ChildProcess | undefined;
  let prometheusUrl: string;
  let output = '';
  const dir = tempDir();

  beforeAll(async () => {
    app = await startApp({ METRICS_PORT: '0' });
    const target = new URL(app.get(MetricsListener).url()!);
    const port = await sparePort();
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

  it('pass promtool check metrics, with every kind of sample the service keeps', async () => {
    const http = app.getHttpServer();
    const keys = app.get(ApiKeysService);
    const { key: revoked } = await keys.create('to-revoke');
    await keys.revoke(revoked.slice(0, 12));
    await request(http).get('/v1/pets').set('Authorization', 'Bearer unknown-key-0123456789abcdef');
    await request(http).get('/v1/pets').set('Authorization', `Bearer ${revoked}`);
    const create = (body: object) =>
      request(http).post('/v1/pets').set(AUTH).set('Idempotency-Key', 'promtool-key').send(body);
    expect((await create({ name: 'Once', categoryId: 2 })).status).toBe(201);
    expect((await create({ name: 'Once', categoryId: 2 })).status).toBe(201);
    expect((await create({ name: 'Other', categoryId: 2 })).status).toBe(422);
    for (const id of [1, 1, 999999, 'abc']) await request(http).get(`/v1/pets/${id}`).set(AUTH);
    await request(http).get('/no/such/path').set(AUTH);
    await garbageCollected();

    const text = await scrape(app);
    expect(sample(text, 'petstore_auth_failures_total{reason="revoked"}')).toBe(1);
    expect(sample(text, 'petstore_idempotency_replays_total')).toBe(1);
    const check = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(`${check.stdout}${check.stderr}`).toBe('');
    expect(check.status).toBe(0);
  });
});
