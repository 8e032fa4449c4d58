import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';
import type { ShutdownConfig } from '../config/app-config';
import { Lifecycle } from './lifecycle';

const DRAIN_POLL_MS = 100;

type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Not Nest's `enableShutdownHooks`: it re-raises the signal, so the process would exit 143. */
export function enableGracefulShutdown(app: INestApplication, times: Readonly<ShutdownConfig>): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  const connections = new Set<HttpSocket>();

  server.on('connection', (socket: HttpSocket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  const inFlight = (): ServerResponse[] =>
    [...connections].flatMap(({ _httpMessage: res }) => (res && !res.writableEnded ? [res] : []));

  const shutDown = (signal: NodeJS.Signals): void => {
    const lifecycle = app.get(Lifecycle);
    if (lifecycle.draining) {
      logger.warn(`${signal} received again: exiting now`);
      process.exit(1);
    }
    lifecycle.draining = true;
    server.prependListener('request', (_req, res: ServerResponse) => res.setHeader('Connection', 'close'));
    const running = inFlight();
    for (const res of running) if (!res.headersSent) res.setHeader('Connection', 'close');
    // Only the listener: http.Server#close would also drop idle keep-alive connections at once.
    NetServer.prototype.close.call(server);
    logger.log(
      `${signal} received: no new connections; ${running.length} request(s) in flight; idle connections ` +
        `closed within ${times.drainMs} ms, then at most ${times.timeoutMs} ms for the rest`,
    );
    let cutOff = false;
    setTimeout(() => {
      cutOff = true;
      logger.warn(`${inFlight().length} request(s) still running at the deadline: closing their connections`);
      server.closeAllConnections();
    }, times.drainMs + times.timeoutMs);
    // Idle keep-alive connections stay open `drainMs`: longer than a proxy keeps them.
    const started = Date.now();
    const drained = setInterval(() => {
      if (connections.size > 0 && Date.now() - started < times.drainMs) return;
      clearInterval(drained);
      server.closeIdleConnections();
      app.close().then(
        () => {
          logger.log('Shut down: connections and database closed');
          process.exit(cutOff ? 1 : 0);
        },
        (error: unknown) => {
          logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
          process.exit(1);
        },
      );
    }, DRAIN_POLL_MS);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, shutDown);
}
