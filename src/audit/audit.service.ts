import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Request } from 'express';
import { Repository } from 'typeorm';
import { callerOf } from '../auth/caller';
import { AuditedChange, AuditLog } from '../common/audit-context';
import type { AuditConfig } from '../config/app-config';
import { Connections } from '../database/connections';
import { DAY_MS, pruneBefore, pruneHourly } from '../database/retention';
import { Page } from '../common/pagination/page';
import { parseDateTime } from '../common/validation/date-time';
import { requestIdOf } from '../http/request-log';
import { AuditEventEntity } from './audit-event.entity';
import { ListAuditEventsQueryDto } from './dto/audit-event.dto';

export const AUDIT_OPTIONS = Symbol('AUDIT_OPTIONS');

@Injectable()
export class AuditService implements AuditLog, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  private stopPruning?: () => void;

  constructor(
    @InjectRepository(AuditEventEntity) private readonly events: Repository<AuditEventEntity>,
    @Inject(AUDIT_OPTIONS) private readonly options: AuditConfig,
  ) {}

  readonly entity = AuditEventEntity;

  entry({ request, resource, resourceId, outcome }: AuditedChange, at: number): Omit<AuditEventEntity, 'id'> {
    const req = request as Request;
    const caller = callerOf(req);
    return {
      at,
      keyId: caller?.keyId ?? null,
      keyName: caller?.keyName ?? null,
      subject: caller?.subject ?? null,
      clientId: caller?.clientId ?? null,
      operation: caller?.operation ?? 'unknown',
      resource,
      resourceId,
      outcome,
      requestId: requestIdOf(req) ?? '',
      clientAddress: (req.ip ?? req.socket?.remoteAddress ?? 'unknown').slice(0, 64),
    };
  }

  /** `since` inclusive, `until` exclusive. */
  list(query: ListAuditEventsQueryDto): Promise<Page<AuditEventEntity>> {
    const { limit, cursor, keyId, subject, resource } = query;
    const [since, until] = [query.since, query.until].map((time) => (time ? parseDateTime(time) : undefined));
    const where = [
      ['keyId', keyId],
      ['subject', subject],
      ['resource', resource],
      ['at', '>=', since],
      ['at', '<', until],
    ] as const;
    return Connections.of(this.events.manager.connection).page(AuditEventEntity, where, {
      limit,
      cursor,
      filter: JSON.stringify([keyId, subject, resource, since, until]),
    });
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
