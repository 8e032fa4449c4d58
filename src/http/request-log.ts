import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Level, Logger } from 'pino';
import { REQUEST_ID_FORMAT, REQUEST_ID_HEADER } from '../common/openapi/headers';
import { annotateServerSpan, serverSpanIdsOf } from '../observability/tracing-state';
import { isMiddlewareRoute } from './route-index';
import { redactUrl } from '../observability/redact';

/** Set on the response at once, so every answer carries it, errors included. */
export function requestIdFor(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID_FORMAT.test(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** As the answer carries it: the request log sets it before anything else runs. */
export function requestIdOf(req: object): string | undefined {
  return (req as Request).res?.getHeader(REQUEST_ID_HEADER) as string | undefined;
}

export function routeOf(req: Request): string | undefined {
  const route = req.route as { path?: unknown; methods?: Record<string, boolean> } | undefined;
  if (typeof route?.path !== 'string' || isMiddlewareRoute(route.methods ?? {})) return undefined;
  return route.path;
}

const LATER_FIELDS = Symbol('laterFields');

/** What a later layer learns of the request and the log line should say: never a secret. */
export function addToLogLine(req: object, fields: Record<string, string>): void {
  const later = req as { [LATER_FIELDS]?: object };
  later[LATER_FIELDS] = later[LATER_FIELDS] ? { ...later[LATER_FIELDS], ...fields } : fields;
}

/** Who called, where no secret tells it (an access token's subject): on the log line and the server span. */
export function nameCaller(req: object, subject: string, clientId?: string): void {
  addToLogLine(req, clientId === undefined ? { subject } : { subject, clientId });
  annotateServerSpan(req, { 'enduser.id': subject });
}

/** 503 is `warn`: a dependency is away, which is expected and logged once per outage. */
export function levelOf(status: number, finished: boolean): Level {
  if (status >= 500 && status !== 503) return 'error';
  return status >= 400 || !finished ? 'warn' : 'info';
}

/** Never headers or bodies. One logger: no child or async context per request (docs/architecture.md). */
export function requestLog(root: Logger): RequestHandler {
  // No field below is a path pino's redaction censors (redactUrl covers the url), so it is skipped.
  const lines = root.child({}, { redact: [] });
  return (req: Request, res: Response, next: NextFunction) => {
    const reqId = requestIdFor(req, res);
    const started = Date.now();
    // Read now: once the connection is gone, neither Express nor the socket knows it.
    const ip = req.ip ?? req.socket.remoteAddress;
    res.once('close', () => {
      const finished = res.writableEnded;
      const level = levelOf(res.statusCode, finished);
      if (!lines.isLevelEnabled(level)) return;
      const durationMs = Date.now() - started;
      const url = redactUrl(req.originalUrl ?? req.url);
      const span = serverSpanIdsOf(req);
      const fields = {
        reqId,
        trace_id: span?.trace_id,
        span_id: span?.span_id,
        method: req.method,
        route: routeOf(req),
        url,
        status: res.statusCode,
        durationMs,
        ip,
        ...(finished ? {} : { aborted: true }),
      };
      const later = (req as { [LATER_FIELDS]?: object })[LATER_FIELDS];
      lines[level](
        later ? { ...fields, ...later } : fields,
        `${req.method} ${url} ${finished ? res.statusCode : 'aborted'} ${durationMs}ms`,
      );
    });
    next();
  };
}
