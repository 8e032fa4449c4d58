import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { locationHeaderDocs } from '../common/resource-location';
import { responseOf } from '../common/response-of';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { ApiPageResponse, setNextLink } from '../common/pagination/next-link';
import { ApiIdParam, IdPipe } from '../common/validation/id.pipe';
import { IDEMPOTENCY_KEY_HEADER_DOCS, IdempotentRequests } from '../idempotency/idempotent-requests';
import { __Item__Entity } from './__item-kebab__.entity';
import { __Items__Service } from './__items-kebab__.service';
import { __Item__Dto } from './dto/__item-kebab__.dto';
import { List__Items__QueryDto } from './dto/list-__items-kebab__-query.dto';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';

/** The collection's path under /v1, as in `Location` and `Link`. */
const COLLECTION = '__items-kebab__';

// Summaries and descriptions come from the doc comments (the @nestjs/swagger plugin); the
// decorators say what it cannot infer: response descriptions, headers and errors.
@ApiResource('__Items__', 'The __nouns__.')
@Controller(COLLECTION)
export class __Items__Controller {
  constructor(
    private readonly __items__: __Items__Service,
    private readonly idempotent: IdempotentRequests,
  ) {}

  /**
   * List __nouns__
   *
   * @remarks A page of at most `limit` __nouns__ in ascending id order (oldest first). When more
   * follow, `Link: <...>; rel="next"` points to the next page.
   */
  @Get()
  @ApiPageResponse(__Item__Dto, {
    collection: COLLECTION,
    noun: '__nouns__',
    description: 'Success: the page of __nouns__.',
  })
  @ApiErrors([400, 401, 429, 500, 503])
  async list__Items__(
    @Query() query: List__Items__QueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto[]> {
    const page = await this.__items__.list(query);
    setNextLink(res, COLLECTION, { limit: query.limit }, page.nextCursor);
    return responseOf(page.items, (__items__) => __items__.map((__item__) => __Item__Dto.fromEntity(__item__)));
  }

  /**
   * Add __a_noun__
   *
   * @remarks The service assigns the `id` and returns the whole __noun__. The body is a
   * New__Item__ with no other properties (`id` included).
   */
  @Post()
  @ApiCreatedResponse({
    type: __Item__Dto,
    description: '__Noun__ added.',
    headers: locationHeaderDocs(COLLECTION, '__noun__'),
  })
  @ApiHeader(IDEMPOTENCY_KEY_HEADER_DOCS)
  @ApiErrors([400, 401, 409, 413, 415, 422, 429, 500, 503])
  create__Item__(
    @Body() new__Item__: New__Item__Dto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto> {
    return this.idempotent.create(
      req,
      res,
      COLLECTION,
      (inTransaction) => this.__items__.create(new__Item__, inTransaction),
      (__item__: __Item__Entity) => __Item__Dto.fromEntity(__item__),
    );
  }

  /**
   * Get __a_noun__ by id
   *
   * @remarks The __noun__ with this `id`, as it was created; 404 when there is none.
   */
  @Get(':__item__Id')
  @ApiIdParam('__item__Id', '__noun__')
  @ApiOkResponse({ type: __Item__Dto, description: 'The __noun__ exists.' })
  @ApiErrors([400, 401, 404, 429, 500, 503])
  async get__Item__(@Param('__item__Id', new IdPipe('__item__Id', '__noun__')) id: number): Promise<__Item__Dto> {
    return responseOf(await this.__items__.get(id), (__item__) => __Item__Dto.fromEntity(__item__));
  }
}
