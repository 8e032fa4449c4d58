import request from 'supertest';
import { DataSource } from 'typeorm';
import { ApiKeysService } from '../src/auth/api-keys.service';
import { Connections } from '../src/database/connections';
import { Metrics } from '../src/observability/metrics';
import { MetricsListener } from '../src/observability/metrics-listener';
import { AUTH, TEST_DATABASE_URL, useApp, withApp } from './support/app';
import { garbageCollected, sample, scrape } from './support/metrics';

// Checked by Prometheus's own tools, promtool and a real server: test/metrics-prometheus.e2e-spec.ts.

describe('metrics off (no METRICS_PORT)', () => {
  const api = useApp();

  it('keeps no metrics and opens no listener; /metrics on the API port is 404', async () => {
    expect(api.app.get(Metrics).enabled).toBe(false);
    expect(api.app.get(MetricsListener).url()).toBeUndefined();
    const response = await request(api.http).get('/metrics').set(AUTH);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });
});

describe('metrics on (METRICS_PORT=0)', () => {
  const api = useApp({ METRICS_PORT: '0' });

  it('listen on 127.0.0.1 by default, serve only /metrics, and never on the API port', async () => {
    expect(api.app.get(MetricsListener).url()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const base = api.app
      .get(MetricsListener)
      .url()!
      .replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
    expect((await request(api.http).get('/metrics').set(AUTH)).status).toBe(404);
  });

  it('time requests by route pattern, never by URL, and count by status', async () => {
    const http = api.http;
    const series = (labels: string) => `http_server_request_duration_seconds_count{${labels}}`;
    const unmatched = series('method="GET",route="unmatched",status_code="404"');
    const unmatchedBefore = sample(await scrape(api.app), unmatched) ?? 0;
    const created = await request(http).post('/v1/pets').set(AUTH).send({ name: 'Rex', categoryId: 1 });
    for (const id of [created.body.id, 999999, 'abc']) await request(http).get(`/v1/pets/${id}`).set(AUTH);
    await request(http).get('/no/such/path').set(AUTH);
    const text = await scrape(api.app);
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
    const http = api.http;
    const keys = api.app.get(ApiKeysService);
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

    const text = await scrape(api.app);
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

  it("count each failed statement, TypeORM's and the service's own prepared ones", async () => {
    const series = `db_client_query_errors_total{db_system="${TEST_DATABASE_URL ? 'postgresql' : 'sqlite'}"}`;
    const before = sample(await scrape(api.app), series)!;
    const dataSource = api.app.get(DataSource);
    // Fails as it runs: TypeORM's SQLite runner tells its logger of that, not of a statement it cannot prepare.
    await expect(dataSource.query('INSERT INTO pets (name) VALUES (NULL)')).rejects.toThrow();
    // Not toThrow(): better-sqlite3 makes its errors with the Error of the first test file in this worker.
    await expect(
      Connections.of(dataSource).reads.rows('SELECT * FROM no_such_table', []),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/no_such_table/),
    });
    expect(sample(await scrape(api.app), series)).toBe(before + 2);
  });
});

describe('rate-limit refusals', () => {
  it('are counted per limit', async () => {
    const env = { METRICS_PORT: '0', RATE_LIMIT_ENABLED: 'true', RATE_LIMIT_PER_MINUTE: '2' };
    await withApp(env, async (app) => {
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++)
        statuses.push((await request(app.getHttpServer()).get('/v1/pets').set(AUTH)).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(sample(await scrape(app), 'petstore_rate_limited_total{limit="per_key"}')).toBe(1);
    });
  });
});
