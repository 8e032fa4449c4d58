import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { httpMetrics } from './http-metrics';
import { PrometheusMetrics } from '../observability/prometheus-metrics';

function exchange(route: string | undefined, statusCode: number, writableEnded: boolean) {
  const req = {
    method: 'GET',
    route: route && { path: route, methods: { get: true } },
  } as unknown as Request;
  const res = Object.assign(new EventEmitter(), { statusCode, writableEnded }) as unknown as Response;
  return { req, res };
}

async function count(metrics: PrometheusMetrics, labels: string): Promise<number | undefined> {
  const text = await metrics.registry.getSingleMetricAsString('http_server_request_duration_seconds');
  const line = text
    .split('\n')
    .find((entry) => entry.startsWith(`http_server_request_duration_seconds_count{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('httpMetrics', () => {
  it('times a request when its answer is over, by method, route pattern and status, and tracks it in flight', async () => {
    const metrics = new PrometheusMetrics();
    const middleware = httpMetrics(metrics);
    const next = jest.fn() as NextFunction;
    const answered = exchange('/v1/pets/:petId', 200, true);
    const abandoned = exchange('/v1/pets/:petId', 200, false);
    const unmatched = exchange(undefined, 404, true);
    for (const { req, res } of [answered, abandoned, unmatched]) middleware(req, res, next);
    expect(next).toHaveBeenCalledTimes(3);
    expect(await metrics.registry.getSingleMetricAsString('http_server_active_requests')).toMatch(/ 3$/);

    for (const { res } of [answered, abandoned, unmatched]) res.emit('close');
    expect(await count(metrics, 'method="GET",route="/v1/pets/:petId",status_code="200"')).toBe(1);
    // The client went away before the answer: 499, as nginx counts it, not the 200 Express started with.
    expect(await count(metrics, 'method="GET",route="/v1/pets/:petId",status_code="499"')).toBe(1);
    expect(await count(metrics, 'method="GET",route="unmatched",status_code="404"')).toBe(1);
    expect(await metrics.registry.getSingleMetricAsString('http_server_active_requests')).toMatch(/ 0$/);
  });
});
