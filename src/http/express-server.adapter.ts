import { NestApplicationOptions, StreamableFile } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express, { type Express } from 'express';
import * as http from 'node:http';
import { responseJson } from '../common/response-of';
import type { HttpConfig } from '../config/app-config';
import { limitConnections } from './connection-limits';

type MessageConstructor = new (...args: never[]) => object;

/** Undefined where `Base` is an ES class, which cannot be called this way (Node 20's are not). */
export function withPrototype<T extends MessageConstructor>(Base: T, prototype: object): T | undefined {
  if (Function.prototype.toString.call(Base).startsWith('class')) return undefined;
  function Message(this: object, ...args: unknown[]): void {
    Reflect.apply(Base as unknown as (...params: unknown[]) => void, this, args);
  }
  Message.prototype = prototype;
  return Message as unknown as T;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** `If-None-Match: *` on a GET or HEAD, which `res.send` answers 304 (RFC 9110 §13.1.2). */
function onlyIfNone(req: http.IncomingMessage | undefined): boolean {
  if (req === undefined || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  if (req.headers['if-none-match']?.trim() !== '*') return false;
  return !/(?:^|,)\s*no-cache\s*(?:,|$)/.test(req.headers['cache-control'] ?? '');
}

/** The status, headers and bytes `res.json` would send, without re-deriving them on every call. */
function sendJson(res: http.ServerResponse, status: number, body: object): void {
  if (status === 200 && onlyIfNone(res.req)) {
    res.statusCode = 304;
    res.end();
    return;
  }
  const known = responseJson(body);
  const text = known?.text ?? JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', known?.bytes ?? Buffer.byteLength(text));
  res.end(text);
}

/** How often the timeouts are checked (Node's default, 30 s, would nearly double them). */
const TIMEOUT_CHECK_MS = 1000;

/** Departs for speed (docs/architecture.md); its server holds slow and hostile clients to `limits`. */
export class ExpressServerAdapter extends ExpressAdapter {
  constructor(private readonly limits: Readonly<HttpConfig>) {
    // Before the first `use()`: `/v1/pets/` and `/V1/PETS` are not `/v1/pets`, so proxy path rules hold.
    super(express().enable('strict routing').enable('case sensitive routing'));
  }

  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Express>();
    const limits = this.limits;
    // Born with Express's prototypes, so its per-request `setPrototypeOf` keeps V8's hidden classes.
    const IncomingMessage = withPrototype(http.IncomingMessage, app.request);
    const ServerResponse = withPrototype(http.ServerResponse, app.response);
    const server = http.createServer({
      ...(IncomingMessage && ServerResponse && { IncomingMessage, ServerResponse }),
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    });
    if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
    limitConnections(server, { ...limits, checkEveryMs: TIMEOUT_CHECK_MS }, app);
    this.httpServer = server;
  }

  override reply(response: http.ServerResponse, body: unknown, statusCode?: number): void {
    if (typeof body !== 'object' || body === null || body instanceof StreamableFile || body instanceof Error)
      super.reply(response, body, statusCode);
    else sendJson(response, statusCode ?? response.statusCode, body);
  }
}
