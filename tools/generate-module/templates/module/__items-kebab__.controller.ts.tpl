// @if !mutable
import { Body, Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
// @end
// @if mutable
import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiNoContentResponse } from '@nestjs/swagger';
import { etagHeaderDocs, ifMatch, ifMatchHeaderDocs, setEtag } from '../common/conditional-requests';
import { MERGE_PATCH } from '../http/json-body.middleware';
// @end
import { ApiCreatedResponse, ApiHeader, ApiOkResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { locationHeaderDocs } from '../common/resource-location';
// @if !mutable
import { responseOf } from '../common/response-of';
// @end
import type { ModuleErrorCode } from '../common/errors/error-codes';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { ApiPageResponse, setNextLink } from '../common/pagination/next-link';
import { ApiIdParam, IdPipe } from '../common/validation/id.pipe';
import { IDEMPOTENCY_KEY_HEADER_DOCS, IdempotentRequests } from '../idempotency/idempotent-requests';
import { __Item__Entity } from './__item-kebab__.entity';
// @if references
import { __ITEMS___ERRORS } from './__items-kebab__.errors';
// @end
import { __Items__Service } from './__items-kebab__.service';
import { __Item__Dto } from './dto/__item-kebab__.dto';
import { List__Items__QueryDto } from './dto/list-__items-kebab__-query.dto';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';
// @if update
import { Update__Item__Dto } from './dto/update-__item-kebab__.dto';
// @end

/** The collection's path under /v1, as in `Location` and `Link`; the OpenAPI tag too. */
const COLLECTION = '__items-kebab__';
/** The module's own codes (`__items-kebab__.errors.ts`) that a create or an update may answer. */
const MODULE_ERRORS: ModuleErrorCode[] = [
  // @each reference
  __ITEMS___ERRORS.__ref_code__,
  // @end
];

// Summaries and descriptions come from the doc comments (the @nestjs/swagger plugin); the
// decorators say what it cannot infer: response descriptions, headers and errors.
@ApiResource(COLLECTION, 'The __nouns__.')
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
    // @if !mutable
    return responseOf(page.items, (__items__) => __items__.map((__item__) => __Item__Dto.fromEntity(__item__)));
    // @end
    // @if mutable
    return page.items.map((__item__) => __Item__Dto.fromEntity(__item__));
    // @end
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
    // @if !mutable
    headers: locationHeaderDocs(COLLECTION, '__noun__'),
    // @end
    // @if mutable
    headers: { ...locationHeaderDocs(COLLECTION, '__noun__'), ...etagHeaderDocs(false) },
    // @end
  })
  @ApiHeader(IDEMPOTENCY_KEY_HEADER_DOCS)
  @ApiErrors([400, 401, 409, 413, 415, 422, 429, 500, 503, ...MODULE_ERRORS])
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
      // @if !mutable
      (__item__: __Item__Entity) => __Item__Dto.fromEntity(__item__),
      // @end
      // @if mutable
      (__item__: __Item__Entity) => __Item__Dto.fromEntity(setEtag(res, __item__)),
      // @end
    );
  }

  /**
   * Get __a_noun__ by id
   *
   * @remarks The __noun__ with this `id` as it is now; 404 when there is none.
   */
  @Get(':__item__Id')
  @ApiIdParam('__item__Id', '__noun__')
  // @if !mutable
  @ApiOkResponse({ type: __Item__Dto, description: 'The __noun__ exists.' })
  // @end
  // @if mutable
  @ApiOkResponse({ type: __Item__Dto, description: 'The __noun__ exists.', headers: etagHeaderDocs() })
  // @end
  @ApiErrors([400, 401, 404, 429, 500, 503])
  // @if !mutable
  async get__Item__(@Param('__item__Id', new IdPipe('__item__Id', '__noun__')) id: number): Promise<__Item__Dto> {
    return responseOf(await this.__items__.get(id), (__item__) => __Item__Dto.fromEntity(__item__));
  }
  // @end
  // @if mutable
  async get__Item__(
    @Param('__item__Id', new IdPipe('__item__Id', '__noun__')) id: number,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto> {
    return __Item__Dto.fromEntity(setEtag(res, await this.__items__.get(id)));
  }
  // @end
  // @if update

  /**
   * Change __a_noun__
   *
   * @remarks A JSON merge patch (RFC 7396) of the __noun__: the properties sent change, `null`
   * removes an optional one. `If-Match` must name its current `ETag` (from a get, the create or
   * the last change), so that no change is lost to another made meanwhile.
   */
  @Patch(':__item__Id')
  @ApiIdParam('__item__Id', '__noun__')
  @ApiConsumes(MERGE_PATCH)
  @ApiBody({ type: Update__Item__Dto })
  @ApiHeader(ifMatchHeaderDocs(true))
  @ApiOkResponse({ type: __Item__Dto, description: 'The __noun__ as changed.', headers: etagHeaderDocs() })
  @ApiErrors([400, 401, 404, 412, 413, 415, 428, 429, 500, 503, ...MODULE_ERRORS])
  async update__Item__(
    @Param('__item__Id', new IdPipe('__item__Id', '__noun__')) id: number,
    @Body() patch: Update__Item__Dto,
    @Headers('if-match') condition: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto> {
    const updated = await this.__items__.update(id, patch, ifMatch(condition, true));
    return __Item__Dto.fromEntity(setEtag(res, updated));
  }
  // @end
  // @if delete

  /**
   * Remove __a_noun__
   *
   * @remarks Then its id answers 404. With `If-Match`, only the version it names is removed.
   */
  @Delete(':__item__Id')
  @HttpCode(204)
  @ApiIdParam('__item__Id', '__noun__')
  @ApiHeader(ifMatchHeaderDocs(false))
  @ApiNoContentResponse({ description: 'The __noun__ is removed.' })
  @ApiErrors([400, 401, 404, 'still_referenced', 412, 429, 500, 503])
  async delete__Item__(
    @Param('__item__Id', new IdPipe('__item__Id', '__noun__')) id: number,
    @Headers('if-match') condition: string | undefined,
  ): Promise<void> {
    await this.__items__.delete(id, ifMatch(condition, false));
  }
  // @end
}
