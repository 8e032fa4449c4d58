import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BeforeApplicationShutdown, Injectable, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource, Logger as TypeOrmLogger } from 'typeorm';
import { MetricsConfig } from '../config/app-config';
import { Metrics } from './metrics';
import { shutdownTracing } from './tracing-state';

export const METRICS_PATH = '/metrics';

/** Metrics get their own listener, never the API's port; it also flushes buffered spans at shutdown. */
@Injectable()
export class MetricsListener implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: Server | undefined;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: MetricsConfig,
    private readonly dataSource: DataSource,
  ) {}

  url(): string | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) return undefined;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}${METRICS_PATH}`;
  }

  onModuleInit(): void {
    if (!this.metrics.enabled) return;
    // Query errors are counted through TypeORM's logger, which every driver tells of each failure.
    const logger = this.dataSource.logger;
    (this.dataSource as { logger: TypeOrmLogger }).logger = Object.create(logger, {
      logQueryError: {
        value: (...args: Parameters<TypeOrmLogger['logQueryError']>): void => {
          this.metrics.queryError();
          logger.logQueryError(...args);
        },
      },
    }) as TypeOrmLogger;
    const { options, driver } = this.dataSource;
    if (options.type !== 'postgres') return this.metrics.watchDatabase('sqlite');
    this.metrics.watchDatabase('postgresql', (driver as unknown as { master: Pool }).master);
  }

  /** Answers `GET /metrics`; anything else is 404. */
  readonly serve = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: see /metrics\n');
      return;
    }
    this.metrics.render().then(
      ({ contentType, text }) => res.writeHead(200, { 'Content-Type': contentType }).end(text),
      () => res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics failed\n'),
    );
  };

  async onApplicationBootstrap(): Promise<void> {
    if (!this.metrics.enabled || this.config.port === null || !this.config.ownListener) return;
    const server = createServer(this.serve);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) =>
        reject(new Error(`metrics listener on ${this.config.host}:${this.config.port}: ${error.message}`)),
      );
      server.listen(this.config.port!, this.config.host, () => resolve());
    });
    this.server = server;
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await shutdownTracing();
  }
}
