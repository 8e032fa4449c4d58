import type { Request, Response } from 'express';
import pino, { DestinationStream, Logger } from 'pino';
import { HttpLogger, pinoHttp } from 'pino-http';
import pretty from 'pino-pretty';
import { AppConfig } from '../../config/app-config';
import { isMiddlewareRoute } from '../http/route-index';
import { REDACT_PATHS, REDACTED, redactUrl } from './redact';
import { requestIdFor } from './request-id';

/**
 * The one pino logger of the app: JSON lines on stdout in production (or to `destination`),
 * human-readable lines otherwise. Writes are synchronous so that nothing is lost on exit.
 */
export function createRootLogger(config: AppConfig, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level: config.logLevel,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
  };
  if (destination === undefined && config.nodeEnv !== 'production') {
    return pino(
      options,
      pretty({
        destination: 1,
        sync: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,method,url,status,durationMs',
      }),
    );
  }
  return pino(
    {
      ...options,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

function url(req: Request): string {
  return redactUrl(req.originalUrl ?? req.url);
}

/** The pattern of the endpoint that answered (`/v1/pets/:petId`), if one did. */
function routeOf(req: Request): string | undefined {
  const route = req.route as { path?: unknown; methods?: Record<string, boolean> } | undefined;
  if (typeof route?.path !== 'string' || isMiddlewareRoute(route.methods ?? {})) return undefined;
  return route.path;
}

/** The fields of a request's log line. */
function requestLine(req: Request, res: Response, durationMs: number): Record<string, unknown> {
  return {
    method: req.method,
    route: routeOf(req),
    url: url(req),
    status: res.statusCode,
    durationMs,
    ip: req.ip ?? req.socket.remoteAddress,
    ...(res.writableEnded ? {} : { aborted: true }),
  };
}

/**
 * pino-http: gives each request its id (echoed in `X-Request-Id`) and a child logger bound to
 * it, and writes one line when the response is done: method, route, url (key-like query
 * values redacted), status, duration, client address. Headers are never logged.
 */
export function httpLogger(root: Logger): HttpLogger<Request, Response> {
  return pinoHttp<Request, Response>({
    logger: root,
    genReqId: requestIdFor,
    quietReqLogger: true,
    quietResLogger: true,
    // pino-http binds the whole request to a child logger on every request, serialising and
    // redacting its headers, even though quiet loggers never use that child: no `req` binding.
    serializers: { req: () => undefined },
    customLogLevel: (_req, res, error) => {
      const level =
        error || res.statusCode >= 500
          ? 'error'
          : res.statusCode >= 400 || !res.writableEnded
            ? 'warn'
            : 'info';
      // A line below the logger's level is dropped anyway: don't build it.
      return root.isLevelEnabled(level) ? level : 'silent';
    },
    customSuccessObject: (req, res, value: { responseTime: number }) =>
      requestLine(req, res, value.responseTime),
    customErrorObject: (req, res, _error, value: { responseTime: number }) =>
      requestLine(req, res, value.responseTime),
    customSuccessMessage: (req, res, durationMs) =>
      `${req.method} ${url(req)} ${res.writableEnded ? res.statusCode : 'aborted'} ${durationMs}ms`,
    customErrorMessage: (req, res) => `${req.method} ${url(req)} ${res.statusCode}`,
  });
}
