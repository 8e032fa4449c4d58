import type { Server, ServerResponse } from 'node:http';
import { INestApplication, Logger } from '@nestjs/common';

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * On SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (each
 * answered with `Connection: close`), close the app and its database, and exit 0. Requests
 * still running after `timeoutMs` have their connections closed and the exit code is 1; a
 * second signal exits at once with 1.
 *
 * Nest's `enableShutdownHooks` is not used: it re-raises the signal after closing, so the
 * process would end killed by it (exit 143) rather than with a clean 0.
 */
export function enableGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  const inFlight = new Set<ServerResponse>();
  let draining = false;

  server.prependListener('request', (_req, res: ServerResponse) => {
    // Keep-alive connections would hold the server open until they time out: close each one
    // as soon as its response is written.
    if (draining) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });

  const shutDown = (signal: NodeJS.Signals): void => {
    if (draining) {
      logger.warn(`${signal} received again: exiting now`);
      process.exit(1);
    }
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
    logger.log(
      `${signal} received: no new connections; waiting for ${inFlight.size} request(s) in flight (at most ${timeoutMs} ms)`,
    );
    let cutOff = false;
    const timer = setTimeout(() => {
      cutOff = true;
      logger.warn(
        `${inFlight.size} request(s) still running after ${timeoutMs} ms: closing their connections`,
      );
      server.closeAllConnections();
    }, timeoutMs);
    app.close().then(
      () => {
        clearTimeout(timer);
        logger.log('Shut down: connections and database closed');
        process.exit(cutOff ? 1 : 0);
      },
      (error: unknown) => {
        logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, shutDown);
}
