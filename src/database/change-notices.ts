import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Client, Notification } from 'pg';
import { DataSource } from 'typeorm';
import type { DatabaseConfig } from '../config/app-config';
import { DATABASE_CONFIG, ResourceStores } from './resource-store';
import type { Notice } from './transaction';
import { Transactions } from './transactions';

/** PostgreSQL's channel of committed changes: every instance drops what it cached of them. */
export const CHANGES_CHANNEL = 'petstore_changes';
/** A notice's payload stays well under PostgreSQL's 8000 bytes. */
const IDS_PER_NOTICE = 500;

/** Every instance hears of the others' changes within `readCacheStaleMs` (docs/architecture.md). */
@Injectable()
export class ChangeNotices implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ChangeNotices');
  /** So an instance does not drop again what it dropped as its own change committed. */
  private readonly instance = randomUUID();
  private client: Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private heardAt = 0;
  private live = false;
  private lostAt: number | undefined;
  private stopped = false;
  private dataVersion: number | undefined;
  private firstHeard: (() => void) | undefined;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly stores: ResourceStores,
    private readonly transactions: Transactions,
    @Inject(DATABASE_CONFIG) private readonly options: Pick<DatabaseConfig, 'readCacheStaleMs'>,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const every = Math.max(25, Math.floor(this.options.readCacheStaleMs / 4));
    if (this.dataSource.options.type !== 'postgres') {
      this.heartbeat = setInterval(() => void this.otherWriters(), every).unref();
      return;
    }
    this.stores.hearsChanges(false);
    this.transactions.tell = (changed) => {
      const notices: Notice[] = [];
      for (const [table, { ids }] of changed)
        for (let start = 0; start < ids.length; start += IDS_PER_NOTICE) {
          const payload = `${this.instance}|${table}|${ids.slice(start, start + IDS_PER_NOTICE).join(',')}`;
          notices.push([CHANGES_CHANNEL, payload]);
        }
      return notices;
    };
    this.heartbeat = setInterval(() => this.beat(), every).unref();
    // Ready once it hears itself (or after half the bound): from the first request on, it caches.
    const heard = new Promise<void>((resolve) => (this.firstHeard = resolve));
    await this.listen();
    const timer = setTimeout(() => this.firstHeard?.(), this.options.readCacheStaleMs / 2);
    await heard;
    clearTimeout(timer);
  }

  /** SQLite: another process's commits show in `PRAGMA data_version`. */
  private async otherWriters(): Promise<void> {
    try {
      const [{ data_version: version }] =
        await this.dataSource.query<[{ data_version: number }]>('PRAGMA data_version');
      if (this.dataVersion !== undefined && version !== this.dataVersion) this.stores.hearsChanges(true);
      this.dataVersion = version;
    } catch {
      // The database is away: the next look, or the request that meets it, says so.
    }
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
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
    this.heardAt = Date.now();
    this.beat();
  }

  /** Notifies itself (`<instance>||<time>`), and stops caching when it has heard nothing for too long. */
  private beat(): void {
    void this.client
      ?.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `${this.instance}||${Date.now()}`])
      .catch(() => undefined);
    const silent = Date.now() - this.heardAt;
    if (this.live && silent > this.options.readCacheStaleMs / 2) this.hears(false);
    // A connection that neither answers nor fails (a peer gone without a word) is replaced.
    if (this.client && silent > 2 * this.options.readCacheStaleMs + 5000)
      this.lost(this.client, new Error('no notice came back'));
  }

  private heard(payload: string | undefined): void {
    const [instance, table, ids] = (payload ?? '').split('|');
    if (instance !== this.instance) {
      if (table && ids) for (const id of ids.split(',')) this.stores.changed(table, Number(id));
    } else if (table === '') {
      this.heardAt = Date.now();
      if (!this.live) this.hears(true);
      this.firstHeard?.();
    }
  }

  private hears(live: boolean): void {
    this.live = live;
    this.stores.hearsChanges(live);
    if (live && this.lostAt !== undefined) {
      this.logger.log(
        `hears other instances' changes again after ${Math.round((Date.now() - this.lostAt) / 1000)} s`,
      );
      this.lostAt = undefined;
    } else if (!live && this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.logger.warn(
        "no longer hears other instances' changes: records that change are read from the database until it does",
      );
    }
  }

  private lost(client: Client, error: Error): void {
    if (client !== this.client && this.client !== undefined) return;
    this.client = undefined;
    client.removeAllListeners('end');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    if (this.live) {
      this.logger.warn(`the connection of change notices failed: ${error.message}`);
      this.hears(false);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.listen(), 500).unref();
  }
}
