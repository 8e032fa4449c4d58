import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { Transform } from 'class-transformer';
import { DEFAULT_PAGE_SIZE, PageCursorParam, PageLimit } from '../../common/pagination/page-query';
import { IsDateTime } from '../../common/validation/date-time';
import { IsId } from '../../common/validation/id.pipe';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { Omittable } from '../../common/validation/presence';
import { REQUEST_ID_FORMAT } from '../../common/openapi/headers';
import { cleanTextSchema, IsCleanText } from '../../common/validation/text.validators';
import { AuditEventEntity } from '../audit-event.entity';

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER } as const;
const TIME = { type: 'string', format: 'date-time', maxLength: 30 } as const;
const RESOURCE = { type: 'string', maxLength: 100, pattern: '^[a-z][a-z0-9-]*$', example: 'pets' } as const;

/** One change made through the API: who (the key or token), what (operation, resource, id), the outcome, from where. */
@ApiSchema({ name: 'AuditEvent' })
export class AuditEventDto {
  @ApiProperty(INT64)
  id!: number;

  /** When the change was made. */
  @ApiProperty(TIME)
  at!: string;

  /** The stored key that made it; absent for an `API_KEYS` entry. */
  @ApiProperty({ ...INT64, required: false })
  keyId?: number;

  @ApiProperty({ ...cleanTextSchema(1, 100), required: false })
  keyName?: string;

  /** The `sub` of the access token that made it; absent for a key. */
  @ApiProperty({ ...cleanTextSchema(1, 255), required: false })
  subject?: string;

  /** That token's `client_id` (or `azp`), where it has one. */
  @ApiProperty({ ...cleanTextSchema(1, 255), required: false })
  clientId?: string;

  /**
   * The operation, as the OpenAPI document names it.
   * @example "createPet"
   */
  @ApiProperty({ type: 'string', maxLength: 100, pattern: '^[A-Za-z][A-Za-z0-9]*$' })
  operation!: string;

  /** The collection of the record changed. */
  @ApiProperty(RESOURCE)
  resource!: string;

  @ApiProperty(INT64)
  resourceId!: number;

  /**
   * The status of the answer.
   * @example 201
   */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 200, maximum: 299 })
  outcome!: number;

  /** The request's `X-Request-Id`, also in its log line. */
  @ApiProperty({ type: 'string', maxLength: 128, pattern: REQUEST_ID_FORMAT.source })
  requestId!: string;

  /** The client's address (behind `TRUST_PROXY`, the forwarded one). */
  @ApiProperty({ type: 'string', maxLength: 64, pattern: '^[0-9A-Za-z:.%_-]+$' })
  clientAddress!: string;

  static fromEntity(event: AuditEventEntity): AuditEventDto {
    return {
      id: event.id,
      at: new Date(event.at).toISOString(),
      ...(event.keyId === null ? {} : { keyId: event.keyId }),
      ...(event.keyName === null ? {} : { keyName: event.keyName }),
      ...(event.subject === null ? {} : { subject: event.subject }),
      ...(event.clientId === null ? {} : { clientId: event.clientId }),
      operation: event.operation,
      resource: event.resource,
      resourceId: event.resourceId,
      outcome: event.outcome,
      requestId: event.requestId,
      clientAddress: event.clientAddress,
    };
  }
}

const decimal = ({ value }: { value: unknown }): unknown =>
  typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;

export class ListAuditEventsQueryDto {
  /** Maximum number of events to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Only the changes of this stored key. */
  @Omittable()
  @Transform(decimal)
  @IsId()
  keyId?: number;

  /** Only the changes made with access tokens of this subject (`sub`). */
  @Omittable()
  @IsCleanText(1, 255)
  subject?: string;

  /** Only the changes of this collection (`pets`, `api-keys`, ...). */
  @ApiProperty({ ...RESOURCE, required: false })
  @Omittable()
  @Matches(new RegExp(RESOURCE.pattern), { message: 'resource must be a collection such as pets' })
  resource?: string;

  /** Only changes at or after this time. */
  @Omittable()
  @IsDateTime()
  since?: string;

  /** Only changes before this time. */
  @Omittable()
  @IsDateTime()
  until?: string;

  /** Where the page starts: the `cursor` of the previous page's `Link: <...>; rel="next"`. */
  @PageCursorParam()
  cursor?: string;
}
