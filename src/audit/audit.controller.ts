import { Controller, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { ListOperation, Resource } from '../common/openapi/operations';
import { setNextLink } from '../common/pagination/next-link';
import { responseOf } from '../common/response-of';
import { RequiredScope } from '../common/scopes';
import { AuditService } from './audit.service';
import { AuditEventDto, ListAuditEventsQueryDto } from './dto/audit-event.dto';

const AUDIT: Resource = { collection: 'audit-events', param: 'eventId', noun: 'audit event' };

@ApiResource(
  AUDIT.collection,
  'Every change made through the API (records of every collection, API keys), one event each, written in ' +
    "the change's own transaction: a change that rolled back or was refused has none. Append-only; kept " +
    '`AUDIT_RETENTION_DAYS` (180 by default).',
)
@RequiredScope('audit:read')
@Controller(AUDIT.collection)
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  /**
   * List audit events
   * @remarks Oldest first, optionally only those of one key, one collection or a time range; never
   * a secret.
   */
  @ListOperation(AuditEventDto, AUDIT, ['keyId', 'resource', 'since', 'until'])
  async listAuditEvents(
    @Query() query: ListAuditEventsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<AuditEventDto[]> {
    const { limit, keyId, resource, since, until } = query;
    const page = await this.audit.list(query);
    setNextLink(res, AUDIT.collection, { limit, keyId, resource, since, until }, page.nextCursor);
    return responseOf(page.items, (events) => events.map((event) => AuditEventDto.fromEntity(event)));
  }
}
