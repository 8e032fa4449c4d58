import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { DEFAULT_PAGE_SIZE, PageCursorParam, PageLimit } from '../../common/pagination/page-query';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { Omittable } from '../../common/validation/presence';
import { EventEntity } from '../event.entity';
import { publishedJson } from '../event-sink';
import { EVENT_ID_FORMAT, EVENT_TYPE_PATTERN, eventId } from '../events.service';

export const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER } as const;
export const TIME = { type: 'string', format: 'date-time', maxLength: 30 } as const;
export const EVENT_ID = {
  type: 'string',
  pattern: EVENT_ID_FORMAT.source,
  maxLength: 20,
  example: 'evt_0000000000000042',
} as const;
export const EVENT_TYPE = {
  type: 'string',
  pattern: '^[a-z][a-z0-9-]{0,62}\\.(created|updated|deleted)$',
  maxLength: 100,
  example: 'pet.updated',
} as const;

/**
 * A committed change, as the feed lists it and a webhook delivers it. `data`: the record as answered
 * after the change, with `version`, `previousStatus` on a status change; for `.deleted`, as it was.
 */
@ApiSchema({ name: 'Event' })
export class EventDto {
  /** Unique, the same on every retry (`webhook-id`); ids sort in the order events were committed. */
  @ApiProperty(EVENT_ID)
  id!: string;

  /** `<noun>.created`, `<noun>.updated` or `<noun>.deleted`. */
  @ApiProperty(EVENT_TYPE)
  type!: string;

  /** When the change was committed. */
  @ApiProperty(TIME)
  timestamp!: string;

  @ApiProperty({
    // allOf: the only way to give the nested object its own `required` through @ApiProperty.
    allOf: [
      {
        type: 'object',
        additionalProperties: true,
        description: "The record's own properties (its collection's schema) with its `version`, and these.",
        required: ['id', 'version'],
        properties: {
          id: INT64,
          version: INT64,
          previousStatus: {
            type: 'string',
            nullable: true,
            maxLength: 16,
            pattern: '^[a-z][a-z0-9-]*$',
            description: 'On a status change, the status before it (`null`: the record had none).',
          },
        },
      },
    ],
    example: { id: 1, name: 'Rex', categoryId: 7, status: 'sold', version: 3, previousStatus: 'pending' },
  })
  data!: object;

  static fromEntity({ id, type, at, data }: EventEntity): EventDto {
    return JSON.parse(publishedJson(eventId(id), type, at, data)) as EventDto;
  }
}

const TYPE_RULE = 'type must be an event type (pet.created), a pattern (pet.*) or *';

export class ListEventsQueryDto {
  /** Maximum number of events to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Only events of this type, or of this pattern (`pet.*`). */
  @ApiProperty({ type: 'string', pattern: EVENT_TYPE_PATTERN.source, maxLength: 100, required: false })
  @Omittable()
  @Matches(EVENT_TYPE_PATTERN, { message: TYPE_RULE })
  type?: string;

  /** Only events after this one: where a consumer that was away catches up. */
  @ApiProperty({ ...EVENT_ID, required: false })
  @Omittable()
  @Matches(EVENT_ID_FORMAT, { message: 'after must be an event id like evt_0000000000000001' })
  after?: string;

  /** Where the page starts: the `cursor` of the previous page's `Link: <...>; rel="next"`. */
  @PageCursorParam()
  cursor?: string;
}
