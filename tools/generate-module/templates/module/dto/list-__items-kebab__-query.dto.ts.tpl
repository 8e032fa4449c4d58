import { ApiProperty } from '@nestjs/swagger';
import { DEFAULT_PAGE_SIZE, PageCursorParam, PageLimit } from '../../common/pagination/page-query';
import { Omittable } from '../../common/validation/presence';
import { __Item__Status } from '../__item-kebab__-status';
import { IsStatus, STATUS_SCHEMA } from './new-__item-kebab__.dto';

/** The query of list__Items__. A filter is a further property with its rule (see docs/extending.md). */
export class List__Items__QueryDto {
  /** Maximum number of __nouns__ to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Returns only __nouns__ with this status. */
  @ApiProperty(STATUS_SCHEMA)
  @Omittable()
  @IsStatus()
  status?: __Item__Status;

  /**
   * Where the page starts: the opaque value of the `cursor` parameter in the previous page's
   * `Link: <...>; rel="next"` header. Leave it out for the first page. A value the service did
   * not give out, or gave out for another filter, is 400 (a rule no schema can state).
   */
  @PageCursorParam()
  cursor?: string;
}
