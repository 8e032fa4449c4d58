// @if mutable
import { Body, Controller, Headers, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ifMatch, setEtag } from '../common/conditional-requests';
// @end
// @if !mutable
import { Body, Controller, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { setEtag } from '../common/conditional-requests';
// @end
import type { ModuleErrorCode } from '../common/errors/error-codes';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import {
  CreateOperation,
  // @if delete
  DeleteOperation,
  // @end
  GetOperation,
  IdParam,
  ListOperation,
  Resource,
  // @if update
  UpdateOperation,
  // @end
} from '../common/openapi/operations';
import { setNextLink } from '../common/pagination/next-link';
import { responseOf } from '../common/response-of';
// @if mutable
import { Transactions } from '../database/transactions';
// @end
import { IdempotentRequests } from '../idempotency/idempotent-requests';
import { __Item__Entity } from './__item-kebab__.entity';
// @if update
import { __ITEM___LIFECYCLE } from './__item-kebab__-status';
// @end
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

/** Its path under /v1 (in `Location` and `Link`, and its OpenAPI tag), its id, and its words. */
const __ITEMS__: Resource = { collection: '__items-kebab__', param: '__item__Id', noun: '__noun__', nouns: '__nouns__' };
// @if references
// @if !immutableReferences
/** The module's own codes (`__items-kebab__.errors.ts`) that a create or an update may answer. */
const MODULE_ERRORS: ModuleErrorCode[] = [
  // @each reference
  __ITEMS___ERRORS.__ref_code__,
  // @end
];
// @end
// @if immutableReferences
/** The module's own codes (`__items-kebab__.errors.ts`) that a create may answer. */
const MODULE_ERRORS: ModuleErrorCode[] = [
  // @each reference
  __ITEMS___ERRORS.__ref_code__,
  // @end
];
/** Those an update may answer: it cannot change every reference. */
const UPDATE_ERRORS: ModuleErrorCode[] = [
  // @each reference
  // @if !immutable
  __ITEMS___ERRORS.__ref_code__,
  // @end
  // @end
];
// @end
// @end
// @if !references
/** The module's own codes that a create or an update may answer (`declareErrorCodes`). */
const MODULE_ERRORS: ModuleErrorCode[] = [];
// @end

@ApiResource(__ITEMS__.collection, 'The __nouns__.')
@Controller(__ITEMS__.collection)
export class __Items__Controller {
  constructor(
    private readonly __items__: __Items__Service,
    private readonly idempotent: IdempotentRequests,
    // @if mutable
    private readonly transactions: Transactions,
    // @end
  ) {}

  /**
   * List all __nouns__
   *
   * @remarks A page of at most `limit` __nouns__ in ascending id order (oldest first), optionally
   * only those with one `status`. When more match, `Link: <...>; rel="next"` points to the next
   * page; following those links walks the whole collection once, with no gaps, also while
   * __nouns__ are being added.
   */
  @ListOperation(__Item__Dto, __ITEMS__, ['status'])
  async list__Items__(
    @Query() query: List__Items__QueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto[]> {
    const page = await this.__items__.list(query);
    setNextLink(res, __ITEMS__.collection, { limit: query.limit, status: query.status }, page.nextCursor);
    return responseOf(page.items, (__items__) => __items__.map((__item__) => __Item__Dto.fromEntity(__item__)));
  }

  /**
   * Add __a_noun__
   *
   * @remarks The service assigns the `id` and returns the whole __noun__. The body is a
   // @if createStatus
   * New__Item__ with no other properties (`id` included).
   // @end
   // @if !createStatus
   * New__Item__ with no other properties (`id` and `status` included): a new __noun__ is
   * `__default_state__` until a change moves it.
   // @end
   */
  @CreateOperation(__Item__Dto, __ITEMS__, { versioned: true, errors: MODULE_ERRORS })
  create__Item__(
    @Body() new__Item__: New__Item__Dto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto> {
    return this.idempotent.create(
      req,
      res,
      __ITEMS__.collection,
      (work) => this.__items__.create(new__Item__, work),
      (__item__: __Item__Entity) => __Item__Dto.fromEntity(setEtag(res, __item__)),
    );
  }

  /**
   * Get __a_noun__ by id
   *
   * @remarks The __noun__ with this `id` as it is now, its version in `ETag`; 404 when there is none.
   */
  @GetOperation(__Item__Dto, __ITEMS__, { versioned: true })
  async get__Item__(@IdParam(__ITEMS__) id: number, @Res({ passthrough: true }) res: Response): Promise<__Item__Dto> {
    return responseOf(setEtag(res, await this.__items__.get(id)), (__item__) => __Item__Dto.fromEntity(__item__));
  }
  // @if update

  /**
   * Change __a_noun__
   *
   * @remarks A JSON merge patch (RFC 7396) of the __noun__: the properties sent change, `null`
   * removes an optional one. `If-Match` must name its current `ETag` (from a get, the create or
   * the last change), so that no change is lost to another made meanwhile. A patch that changes
   * nothing answers the __noun__ as it is, its version unchanged.
   */
  // @if !immutableReferences
  @UpdateOperation(__Item__Dto, Update__Item__Dto, __ITEMS__, { errors: MODULE_ERRORS, lifecycle: __ITEM___LIFECYCLE })
  // @end
  // @if immutableReferences
  @UpdateOperation(__Item__Dto, Update__Item__Dto, __ITEMS__, { errors: UPDATE_ERRORS, lifecycle: __ITEM___LIFECYCLE })
  // @end
  async update__Item__(
    @IdParam(__ITEMS__) id: number,
    @Body() patch: Update__Item__Dto,
    @Headers('if-match') condition: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<__Item__Dto> {
    const updated = await this.transactions.run(
      (work) => this.__items__.update(id, patch, ifMatch(condition, true), work),
      req,
    );
    return responseOf(setEtag(res, updated), (__item__) => __Item__Dto.fromEntity(__item__));
  }
  // @end
  // @if delete

  /**
   * Remove __a_noun__
   *
   * @remarks Then its id answers 404. With `If-Match`, only the version it names is removed.
   */
  @DeleteOperation(__ITEMS__)
  async delete__Item__(
    @IdParam(__ITEMS__) id: number,
    @Headers('if-match') condition: string | undefined,
    @Req() req: Request,
  ): Promise<void> {
    await this.transactions.run((work) => this.__items__.delete(id, ifMatch(condition, false), work), req);
  }
  // @end
}
