import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, PageCursorParam, PageLimit } from '../../common/pagination/page-query';
import { EachMatching } from '../../common/validation/array.validators';
import { Omittable, Removable } from '../../common/validation/presence';
import { cleanTextSchema, IsCleanText } from '../../common/validation/text.validators';
import { EVENT_TYPE_PATTERN, eventId } from '../events.service';
import { DeliveryAttempt, DeliveryStatus, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEndpointEntity } from './webhook-endpoint.entity';
import { EVENT_ID, EVENT_TYPE, INT64, TIME } from '../dto/event.dto';

const URL_SCHEMA = {
  type: 'string',
  format: 'uri',
  maxLength: 2048,
  example: 'https://hooks.example.com/petstore',
} as const;
const TYPES = {
  type: 'array',
  items: { type: 'string', pattern: EVENT_TYPE_PATTERN.source, maxLength: 100 },
  minItems: 1,
  maxItems: 50,
  example: ['pet.*'],
} as const;
const TYPES_RULE = 'eventTypes must be 1 to 50 event types (pet.created), patterns (pet.*) or *';
const MAX_GRACE_SECONDS = 7 * 86_400;
const GRACE_RULE = `graceSeconds must be an integer from 0 to ${MAX_GRACE_SECONDS}`;
const iso = (ms: number) => new Date(ms).toISOString();

const Url = (): PropertyDecorator =>
  applyDecorators(
    ApiProperty(URL_SCHEMA),
    IsString({ message: 'url must be a URL' }),
    MaxLength(2048, { message: 'url must be at most 2048 characters' }),
  );

const EventTypes = (): PropertyDecorator =>
  applyDecorators(ApiProperty(TYPES), EachMatching(EVENT_TYPE_PATTERN, 50, TYPES_RULE), Omittable());

/** Where events are delivered, signed (Standard Webhooks); never its secret, which create and rotate answer once. */
@ApiSchema({ name: 'WebhookEndpoint' })
export class WebhookEndpointDto {
  @ApiProperty(INT64)
  id!: number;

  @ApiProperty(URL_SCHEMA)
  url!: string;

  @ApiProperty({ ...cleanTextSchema(1, 500), required: false })
  description?: string;

  /** The events it receives: types, patterns (`pet.*`) or `*`. */
  @ApiProperty(TYPES)
  eventTypes!: string[];

  /** Off: nothing is delivered to it (events made meanwhile are not sent later). */
  @ApiProperty({ type: 'boolean' })
  enabled!: boolean;

  /** Why the service turned it off (its receiver answered 410 Gone); absent when a user did. */
  @ApiProperty({ type: 'string', maxLength: 200, required: false })
  disabledReason?: string;

  @ApiProperty(TIME)
  createdAt!: string;

  /** After a rotation: until when deliveries are also signed with the previous secret. */
  @ApiProperty({ ...TIME, required: false })
  previousSecretExpiresAt?: string;

  static fromEntity(endpoint: WebhookEndpointEntity): WebhookEndpointDto {
    return {
      id: endpoint.id,
      url: endpoint.url,
      ...(endpoint.description === null ? {} : { description: endpoint.description }),
      eventTypes: endpoint.eventTypes.split(' '),
      enabled: endpoint.enabled,
      ...(endpoint.disabledReason === null ? {} : { disabledReason: endpoint.disabledReason }),
      createdAt: iso(endpoint.createdAt),
      ...(endpoint.previousSecretExpiresAt === null || endpoint.previousSecretExpiresAt <= Date.now()
        ? {}
        : { previousSecretExpiresAt: iso(endpoint.previousSecretExpiresAt) }),
    };
  }
}

/** A webhook endpoint with its signing secret: answered once, when it is made or its secret rotated. */
@ApiSchema({ name: 'WebhookEndpointWithSecret' })
export class WebhookEndpointWithSecretDto extends WebhookEndpointDto {
  /** `whsec_` and base64: verify each delivery with it (any Standard Webhooks library does). */
  @ApiProperty({ type: 'string', maxLength: 100, pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$' })
  secret!: string;

  static withSecret(endpoint: WebhookEndpointEntity): WebhookEndpointWithSecretDto {
    return { ...WebhookEndpointDto.fromEntity(endpoint), secret: endpoint.secret };
  }
}

@ApiSchema({ name: 'NewWebhookEndpoint' })
export class NewWebhookEndpointDto {
  /** An `https` URL of a public address (the service refuses private, loopback and metadata ones). */
  @Url()
  url!: string;

  @Omittable()
  @IsCleanText(1, 500)
  description?: string;

  /** Default: every event (`*`). */
  @EventTypes()
  eventTypes?: string[];

  /** Default: true. */
  @Omittable()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

/** A JSON merge patch (RFC 7396) of an endpoint; `description: null` removes it. */
@ApiSchema({ name: 'WebhookEndpointPatch' })
export class WebhookEndpointPatchDto {
  @Url()
  @Omittable()
  url?: string;

  @Removable()
  @IsCleanText(1, 500)
  description?: string | null;

  @EventTypes()
  eventTypes?: string[];

  /** Turning it on again clears `disabledReason`. */
  @Omittable()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

@ApiSchema({ name: 'WebhookSecretRotation' })
export class RotateWebhookSecretDto {
  /** How long deliveries are also signed with the previous secret, in seconds: by default a day, at most 7 days. */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, maximum: MAX_GRACE_SECONDS })
  @Omittable()
  @IsInt({ message: GRACE_RULE })
  @Min(0, { message: GRACE_RULE })
  @Max(MAX_GRACE_SECONDS, { message: GRACE_RULE })
  graceSeconds?: number;
}

@ApiSchema({ name: 'WebhookAttempt' })
export class WebhookAttemptDto {
  @ApiProperty(TIME)
  at!: string;

  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, maximum: 3_600_000 })
  durationMs!: number;

  /** The receiver's status; absent when none came (a timeout, a refused connection). */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 100, maximum: 599, required: false })
  status?: number;

  /** Why no status came. */
  @ApiProperty({ type: 'string', maxLength: 200, required: false })
  error?: string;

  /** The start of the receiver's answer body, at most 1 KiB. */
  @ApiProperty({ type: 'string', maxLength: 1024, required: false })
  excerpt?: string;
}

const STATUSES: readonly DeliveryStatus[] = ['pending', 'succeeded', 'failed'];

/** One event for one endpoint: pending while it is retried, then succeeded or failed. */
@ApiSchema({ name: 'WebhookDelivery' })
export class WebhookDeliveryDto {
  @ApiProperty(INT64)
  id!: number;

  @ApiProperty(EVENT_ID)
  eventId!: string;

  @ApiProperty(EVENT_TYPE)
  eventType!: string;

  @ApiProperty({ type: 'string', enum: STATUSES })
  status!: DeliveryStatus;

  /** The last attempts (at most 10), oldest first. */
  @ApiProperty({ type: [WebhookAttemptDto], maxItems: 10 })
  attempts!: WebhookAttemptDto[];

  /** While pending: when the next attempt is due. */
  @ApiProperty({ ...TIME, required: false })
  nextAttemptAt?: string;

  @ApiProperty(TIME)
  createdAt!: string;

  @ApiProperty({ ...TIME, required: false })
  deliveredAt?: string;

  static fromEntity(delivery: WebhookDeliveryEntity): WebhookDeliveryDto {
    const attempts = JSON.parse(delivery.attempts) as DeliveryAttempt[];
    return {
      id: delivery.id,
      eventId: eventId(delivery.eventId),
      eventType: delivery.eventType,
      status: delivery.status,
      attempts: attempts.map(({ at, ...attempt }) => ({ at: iso(at), ...attempt })),
      ...(delivery.status === 'pending' ? { nextAttemptAt: iso(delivery.nextAttemptAt) } : {}),
      createdAt: iso(delivery.createdAt),
      ...(delivery.deliveredAt === null ? {} : { deliveredAt: iso(delivery.deliveredAt) }),
    };
  }
}

export class ListWebhookEndpointsQueryDto {
  /** Maximum number of endpoints to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Where the page starts: the `cursor` of the previous page's `Link: <...>; rel="next"`. */
  @PageCursorParam()
  cursor?: string;
}

export class ListWebhookDeliveriesQueryDto extends ListWebhookEndpointsQueryDto {
  /** Maximum number of deliveries to return (page size). */
  @PageLimit()
  override limit: number = DEFAULT_PAGE_SIZE;

  /** Only deliveries in this state. */
  @Omittable()
  @IsIn(STATUSES, { message: 'status must be pending, succeeded or failed' })
  status?: DeliveryStatus;
}
