import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Request } from 'express';
import { Between, EntityManager, FindOptionsWhere, MoreThan, Repository } from 'typeorm';
import { callerOf } from '../auth/caller';
import { AuditedChange, AuditLog } from '../common/audit-context';
import type { AuditConfig } from '../config/app-config';
import { insertLast } from '../database/resource-store';
import { DAY_MS, pruneBefore, pruneHourly } from '../database/retention';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import { requestIdOf } from '../http/request-log';
import { AuditEventEntity } from './audit-event.entity';

export const AUDIT_OPTIONS = Symbol('AUDIT_OPTIONS');

export interface AuditFilter {
  keyId?: number;
  resource?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
}

@Injectable()
export class AuditService implements AuditLog, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private stopPruning?: () => void;

  constructor(
    @InjectRepository(AuditEventEntity) private readonly events: Repository<AuditEventEntity>,
    @Inject(AUDIT_OPTIONS) private readonly options: AuditConfig,
  ) {}

  record(transaction: EntityManager, changes: readonly AuditedChange[]): Promise<void> {
    const at = Date.now();
    const rows = changes.map(({ request, resource, resourceId, outcome }) => {
      const req = request as Request;
      const caller = callerOf(req);
      return {
        at,
        keyId: caller?.keyId ?? null,
        keyName: caller?.keyName ?? null,
        operation: caller?.operation ?? 'unknown',
        resource,
        resourceId,
        outcome,
        requestId: requestIdOf(req) ?? '',
        clientAddress: (req.ip ?? req.socket?.remoteAddress ?? 'unknown').slice(0, 64),
      };
    });
    return insertLast(transaction, AuditEventEntity, rows);
  }

  async list(filter: AuditFilter, limit: number, cursor?: string): Promise<Page<AuditEventEntity>> {
    const filterText = JSON.stringify([filter.keyId, filter.resource, filter.since, filter.until]);
    const afterId = cursor === undefined ? 0 : decodeCursor(cursor, filterText).afterId;
    const where: FindOptionsWhere<AuditEventEntity> = { id: MoreThan(afterId) };
    if (filter.keyId !== undefined) where.keyId = filter.keyId;
    if (filter.resource !== undefined) where.resource = filter.resource;
    if (filter.since !== undefined || filter.until !== undefined)
      where.at = Between(filter.since ?? 0, (filter.until ?? Number.MAX_SAFE_INTEGER) - 1);
    const rows = await this.events.find({ where, order: { id: 'ASC' }, take: limit + 1 });
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    return { items, nextCursor: encodeCursor({ afterId: items[items.length - 1].id, filter: filterText }) };
  }

  prune(now = Date.now()): Promise<number> {
    return pruneBefore(this.events, 'at', now - this.options.retentionDays * DAY_MS);
  }

  onApplicationBootstrap(): void {
    this.stopPruning = pruneHourly(this.logger, 'audit events', () => this.prune());
  }

  onApplicationShutdown(): void {
    this.stopPruning?.();
  }
}
