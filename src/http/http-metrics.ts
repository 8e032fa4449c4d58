import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Metrics } from '../observability/metrics';
import { routeOf } from './request-log';

const UNMATCHED_ROUTE = 'unmatched';
/** The client went away before the answer was sent (nginx's convention). */
const CLIENT_CLOSED_REQUEST = 499;

/** By route pattern, never the URL itself, so ids do not multiply the series. */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    metrics.requestStarted();
    res.once('close', () => {
      metrics.requestEnded(
        req.method,
        routeOf(req) ?? UNMATCHED_ROUTE,
        res.writableEnded ? res.statusCode : CLIENT_CLOSED_REQUEST,
        (performance.now() - started) / 1000,
      );
    });
    next();
  };
}
