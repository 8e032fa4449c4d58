import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';
import * as http from 'node:http';

type MessageConstructor = new (...args: never[]) => object;

/** Node's request and response classes, whose objects Express re-prototypes on every request. */
export interface MessageClasses {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
}

/**
 * A constructor whose objects are built as `Base` builds them, with `prototype` as their
 * prototype from the start. `undefined` where `Base` is an ES class, which cannot be called on
 * an object it did not create (Node 20's messages are plain constructor functions).
 */
export function withPrototype<T extends MessageConstructor>(Base: T, prototype: object): T | undefined {
  if (Function.prototype.toString.call(Base).startsWith('class')) return undefined;
  function Message(this: object, ...args: unknown[]): void {
    Reflect.apply(Base as unknown as (...params: unknown[]) => void, this, args);
  }
  Message.prototype = prototype;
  return Message as unknown as T;
}

/**
 * Request and response classes whose objects already have the app's `request` and `response`
 * prototypes: Express sets exactly these on every request (`Object.setPrototypeOf` in
 * `app.handle`), and then that call changes nothing. Changing an object's prototype makes V8
 * give it a new hidden class; measured on a bare Express app, the objects of the request then
 * outlived the young generation, and the app answered a third as many requests as the same app
 * whose requests were built with these prototypes. Empty where Node's classes cannot be
 * extended this way: then Node's own are used.
 */
export function expressMessageClasses(app: Express): Partial<MessageClasses> {
  const IncomingMessage = withPrototype(http.IncomingMessage, app.request);
  const ServerResponse = withPrototype(http.ServerResponse, app.response);
  return IncomingMessage !== undefined && ServerResponse !== undefined
    ? { IncomingMessage, ServerResponse }
    : {};
}

/**
 * Nest's Express adapter, whose plain HTTP server builds requests and responses with Express's
 * prototypes in place (expressMessageClasses). An app started with `httpsOptions` or
 * `forceCloseConnections` gets Nest's own server, and everything else is Nest's.
 */
export class ExpressServerAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions || options?.forceCloseConnections) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = http.createServer(expressMessageClasses(app), app);
  }
}
