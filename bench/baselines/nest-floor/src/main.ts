// nest-floor: the raw-node baseline's work (bearer key, validation, better-sqlite3, JSON) inside
// a minimal NestJS 11 + Express app: a guard, a controller, an error filter, and nothing else (no
// helmet, logging, ORM or validation library). The floor of the framework the service is built on.
//
// Env: PORT (3000), HOST (127.0.0.1), API_KEYS (comma-separated), DATABASE_PATH (./petstore.sqlite),
//      FLOOR_TUNED=1 for the tuned floor (below), FLOOR_DB_URL=postgres://... for the same work on
//      PostgreSQL (FLOOR_PG_POOL connections, 10 by default).
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter, NestExpressApplication } from '@nestjs/platform-express';
import * as http from 'node:http';
import { ErrorBodyFilter } from './api-error';
import { ApiKeyGuard } from './api-key.guard';
import { PetsController } from './pets.controller';
import { openStore, store } from './store';

@Module({
  controllers: [PetsController],
  providers: [
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_FILTER, useClass: ErrorBodyFilter },
  ],
})
class AppModule {}

/** A constructor that builds its objects as `Base` does, but with `prototype` as their prototype. */
function constructing<T extends new (...args: never[]) => object>(Base: T, prototype: object): T {
  function Born(this: object, ...args: unknown[]): void {
    // node's IncomingMessage and ServerResponse are function-style constructors: callable on `this`.
    Reflect.apply(Base, this, args);
  }
  Born.prototype = prototype;
  return Born as unknown as T;
}

/**
 * FLOOR_TUNED=1: Express gives every request and response its own prototypes
 * (`Object.setPrototypeOf(req, app.request)`), which makes V8 rebuild their hidden classes. This
 * adapter's server creates them with those prototypes already, so the call changes nothing: the
 * floor with that one known cost removed, the fair anchor for a service that does the same.
 */
class TunedExpressAdapter extends ExpressAdapter {
  override initHttpServer(): void {
    const app = this.getInstance<{ request: object; response: object }>();
    this.httpServer = http.createServer(
      {
        IncomingMessage: constructing<typeof http.IncomingMessage>(http.IncomingMessage, app.request),
        ServerResponse: constructing<typeof http.ServerResponse>(http.ServerResponse, app.response),
      },
      this.getInstance(),
    );
  }
}

async function main(): Promise<void> {
  await openStore();
  const tuned = process.env.FLOOR_TUNED === '1';
  const adapter = tuned ? new TunedExpressAdapter() : new ExpressAdapter();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, adapter, { logger: ['error'] });
  // A PATCH body is a merge patch (RFC 7396).
  app.useBodyParser('json', { type: ['application/json', 'application/merge-patch+json'] });
  await app.listen(Number(process.env.PORT || 3000), process.env.HOST || '127.0.0.1');
  console.log(`nest-floor${tuned ? ' (tuned)' : ''}: ${await app.getUrl()}/v1`);
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.on(signal, () => {
      void app.close().finally(async () => {
        await store.close();
        process.exit(0);
      });
    });
  }
}

void main();
