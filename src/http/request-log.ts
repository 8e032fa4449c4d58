import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Level, Logger } from 'pino';
import { serverSpanIdsOf } from '../observability/tracing-state';
import { isMiddlewareRoute } from './route-index';
import { redactUrl } from '../observability/redact';
import { requestIdFor } from './request-id';

const REQUEST_ID = Symbol('requestId');

interface WithRequestId {
  [REQUEST_ID]?: string;
}

/** The id the request log gave this request (also its `X-Request-Id`), if it went through it. */
export function requestIdOf(req: object): string | undefined {
  return (req as WithRequestId)[REQUEST_ID];
}

/** The pattern of the endpoint that answered (`/v1/pets/:petId`), if one did. */
export function routeOf(req: Request): string | undefined {
  const route = req.route as { path?: unknown; methods?: Record<string, boolean> } | undefined;
  if (typeof route?.path !== 'string' || isMiddlewareRoute(route.methods ?? {})) return undefined;
  return route.path;
}

/**
 * `error` for 5xx, `warn` for 4xx, 503 (a dependency is away: expected, and logged once per
 * outage) and answers never finished, `info` otherwise.
 */
export function levelOf(status: number, finished: boolean): Level {
  if (status >= 500 && status !== 503) return 'error';
  return status >= 400 || !finished ? 'warn' : 'info';
}

/**
 * Gives each request its id (echoed at once in `X-Request-Id`, so every answer carries it) and
 * writes one line when the exchange is over: method, route, url (key-like query values
 * redacted), status, duration and client address, under the request id (and, with tracing on,
 * the ids of the request's server span: `trace_id`, `span_id`). Headers and bodies are
 * never logged. The line is built only when its level is enabled, and written through one logger
 * made at start: no child logger and no async context per request (both measured:
 * docs/performance.md).
 */
export function requestLog(root: Logger): RequestHandler {
  // The line's fields are the ones below and nothing else: none is a path the redaction
  // censors (the url's key-like query values are redacted by redactUrl), so the line skips
  // pino's redaction, a tenth or more of a request's CPU with the log at `info`.
  const lines = root.child({}, { redact: [] });
  return (req: Request, res: Response, next: NextFunction) => {
    const reqId = requestIdFor(req, res);
    (req as WithRequestId)[REQUEST_ID] = reqId;
    const started = Date.now();
    // 'close' comes once per response: after it was sent, or when the connection went first.
    res.once('close', () => {
      const finished = res.writableEnded;
      const level = levelOf(res.statusCode, finished);
      if (!lines.isLevelEnabled(level)) return;
      const durationMs = Date.now() - started;
      const url = redactUrl(req.originalUrl ?? req.url);
      const span = serverSpanIdsOf(req);
      lines[level](
        {
          reqId,
          trace_id: span?.trace_id,
          span_id: span?.span_id,
          method: req.method,
          route: routeOf(req),
          url,
          status: res.statusCode,
          durationMs,
          ip: req.ip ?? req.socket.remoteAddress,
          ...(finished ? {} : { aborted: true }),
        },
        `${req.method} ${url} ${finished ? res.statusCode : 'aborted'} ${durationMs}ms`,
      );
    });
    next();
  };
}
