import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/** The response a connection is writing, if any (Node's own slot for it). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * On SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (each
 * answered with `Connection: close`), close the app and its database, and exit 0. Requests
 * still running after `timeoutMs` have their connections closed and the exit code is 1; a
 * second signal exits at once with 1.
 *
 * The open connections are tracked, not the requests: nothing runs per request until a signal
 * comes (a keep-alive connection carries many). Then the response each connection is writing
 * is a request in flight. A pipelined request queued behind it on the same connection is not
 * counted, and is dropped when that connection closes after the first answer (Node closes a
 * `Connection: close` socket once its answer is written); clients seldom pipeline.
 *
 * Nest's `enableShutdownHooks` is not used: it re-raises the signal after closing, so the
 * process would end killed by it (exit 143) rather than with a clean 0.
 */
export function enableGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  const connections = new Set<HttpSocket>();
  let draining = false;

  server.on('connection', (socket: HttpSocket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

  /** The responses being written now: one per connection busy with a request. */
  const inFlight = (): ServerResponse[] => {
    const responses: ServerResponse[] = [];
    for (const socket of connections) {
      const res = socket._httpMessage;
      if (res && !res.writableEnded) responses.push(res);
    }
    return responses;
  };

  const shutDown = (signal: NodeJS.Signals): void => {
    if (draining) {
      logger.warn(`${signal} received again: exiting now`);
      process.exit(1);
    }
    draining = true;
    // Keep-alive connections would hold the server open until they time out: each one closes
    // as soon as its response is written, including those of requests still to come on it.
    server.prependListener('request', (_req, res: ServerResponse) => res.setHeader('Connection', 'close'));
    const running = inFlight();
    for (const res of running) if (!res.headersSent) res.setHeader('Connection', 'close');
    logger.log(
      `${signal} received: no new connections; waiting for ${running.length} request(s) in flight (at most ${timeoutMs} ms)`,
    );
    let cutOff = false;
    const timer = setTimeout(() => {
      cutOff = true;
      logger.warn(
        `${inFlight().length} request(s) still running after ${timeoutMs} ms: closing their connections`,
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
