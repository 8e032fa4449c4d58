/**
 * `node -r ts-node/register/transpile-only bench/metrics-overhead.ts`: what the metrics cost on
 * the request path, measured alone, since on a shared machine the A/B runs of bench:compare
 * swing by more than it. Runs the real middleware (histogram by method, route and status;
 * requests in flight) and a read-cache counter on fake exchanges, against the same loop without
 * them, in alternating rounds; prints the median CPU time per request of each and the difference.
 */
import { EventEmitter } from 'node:events';
import type { Request, Response } from 'express';
import { httpMetrics } from '../src/http/http-metrics';
import { Metrics } from '../src/observability/metrics';
import { PrometheusMetrics } from '../src/observability/prometheus-metrics';

const ROUTES = ['/v1/pets', '/v1/pets/:petId'];
const STATUSES = [200, 200, 200, 404];

function run(metrics: Metrics, middleware: ReturnType<typeof httpMetrics> | undefined, n: number): number {
  const started = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const req = {
      method: 'GET',
      route: { path: ROUTES[i & 1], methods: { get: true } },
    } as unknown as Request;
    const res = Object.assign(new EventEmitter(), { statusCode: STATUSES[i & 3], writableEnded: true });
    middleware?.(req, res as unknown as Response, () => undefined);
    metrics.readCache('row', (i & 3) !== 0);
    res.emit('close');
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const on = new PrometheusMetrics();
const middleware = httpMetrics(on);
const off = new Metrics();
const [withMetrics, without]: number[][] = [[], []];
for (let round = 0; round < 12; round++) {
  const n = round < 3 ? 100_000 : 300_000; // the first rounds warm up and are not counted
  const a = run(on, middleware, n);
  const b = run(off, undefined, n);
  if (round >= 3) {
    withMetrics.push(a);
    without.push(b);
  }
}
console.log(
  `metrics on ${median(withMetrics).toFixed(3)} µs/request, off ${median(without).toFixed(3)} µs/request: ` +
    `${(median(withMetrics) - median(without)).toFixed(3)} µs per request on the request path`,
);
