import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { INestApplication, Logger } from '@nestjs/common';

const SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/** `_httpMessage`: Node's internal slot for the response the connection is writing. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Not Nest's `enableShutdownHooks`: it re-raises the signal, so the process would exit 143, not 0. */
export function enableGracefulShutdown(app: INestApplication, timeoutMs: number): void {
  const logger = new Logger('Shutdown');
  const server = app.getHttpServer() as Server;
  // Connections, not requests: nothing runs per request. A pipelined request queued behind one is dropped.
  const connections = new Set<HttpSocket>();
  let draining = false;

  server.on('connection', (socket: HttpSocket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });

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
    // Otherwise keep-alive connections would hold the server open until they time out.
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
