import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Client, Notification } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { CHANGES_CHANNEL, ResourceStores } from './resource-store';

/** How soon a lost listener is connected again. */
const RECONNECT_MS = 500;

/**
 * On PostgreSQL, every instance hears of the rows the others change: a change's transaction
 * sends `NOTIFY petstore_changes` (delivered only once it commits, and never when it rolls back),
 * and each instance LISTENs on a connection of its own and drops those rows and their tables'
 * pages from its cache. While that connection is lost, cached rows of mutable tables are answered
 * no longer than `READ_CACHE_STALE_MS`; once it is back, everything of them is dropped, since
 * notices may have been missed meanwhile.
 */
@Injectable()
export class ChangeNotices implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ChangeNotices');
  /** So an instance does not drop again what it dropped as its own change committed. */
  private readonly instance = randomUUID();
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lostAt: number | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly stores: ResourceStores,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.dataSource.options.type !== 'postgres') return;
    this.stores.notice = (transaction: EntityManager, table: string, id: number) =>
      transaction.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `${this.instance}|${table}|${id}`]);
    await this.listen();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.client?.end().catch(() => undefined);
  }

  private async listen(): Promise<void> {
    const { Client } = (this.dataSource.driver as unknown as { postgres: typeof import('pg') }).postgres;
    const options = this.dataSource.options as { url?: string; connectTimeoutMS?: number };
    const client = new Client({
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMS,
      application_name: 'petstore-change-notices',
      keepAlive: true,
    });
    client.on('notification', (notice: Notification) => this.heard(notice.payload));
    client.on('error', (error: Error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('the connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    this.client = client;
    if (this.lostAt !== undefined) {
      // Changes made while it was lost were not heard: nothing of them may stay.
      this.stores.forgetMutable();
      this.logger.log(`listening again after ${Math.round((Date.now() - this.lostAt) / 1000)} s`);
      this.lostAt = undefined;
    }
  }

  private heard(payload: string | undefined): void {
    const [instance, table, id] = (payload ?? '').split('|');
    if (instance !== this.instance && table && id) this.stores.changed(table, Number(id));
  }

  private lost(client: Client, error: Error): void {
    if (client !== this.client && this.client !== undefined) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    if (this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.logger.warn(
        `no longer hears of other instances' changes (${error.message}): their rows are cached ` +
          'for READ_CACHE_STALE_MS at most until it is back',
      );
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.listen(), RECONNECT_MS);
    this.timer.unref();
  }
}
