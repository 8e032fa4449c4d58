import { Controller, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { ListOperation, Resource } from '../common/openapi/operations';
import { setNextLink } from '../common/pagination/next-link';
import { RequiredScope } from '../common/scopes';
import { EventDto, ListEventsQueryDto } from './dto/event.dto';
import { EventsService } from './events.service';

const EVENTS: Resource = { collection: 'events', param: 'eventId', noun: 'event' };

@ApiResource(
  EVENTS.collection,
  'Every committed change of every collection, oldest first: `<noun>.created`, `.updated` (a status ' +
    'change says `previousStatus`) and `.deleted`, each with the record as answered and its `version`. ' +
    'The same events go to webhook endpoints; a consumer that was away catches up here with `after`. ' +
    'Kept `EVENTS_RETENTION_DAYS` (30 by default).',
)
@RequiredScope('events:read')
@Controller(EVENTS.collection)
export class EventsController {
  constructor(private readonly events: EventsService) {}

  /**
   * List events
   * @remarks Oldest first, optionally only those after one event (`after`) or of one type or
   * pattern (`pet.*`). No event is ever listed before one committed earlier.
   */
  @ListOperation(EventDto, EVENTS, ['type', 'after'])
  async listEvents(
    @Query() query: ListEventsQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<EventDto[]> {
    const { limit, type, after } = query;
    const page = await this.events.list(query);
    setNextLink(res, EVENTS.collection, { limit, type, after }, page.nextCursor);
    return page.items.map((event) => EventDto.fromEntity(event));
  }
}
