import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
// @if references
// @end
import { Page } from '../common/pagination/page';
// @if references
import { keepReferences, requireReference } from '../database/references';
// @end
import { ResourceStore, ResourceStores, WithCreated } from '../database/resource-store';
// @each reference
import { __RefsService__ } from '../__ref_folder__/__ref_folder__.service';
// @end
import { __Item__Entity } from './__item-kebab__.entity';
import { DEFAULT___ITEM___STATUS } from './__item-kebab__-status';
// @if references
import { __ITEMS___ERRORS } from './__items-kebab__.errors';
// @end
import { List__Items__QueryDto } from './dto/list-__items-kebab__-query.dto';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';
// @if update
import { Update__Item__Dto } from './dto/update-__item-kebab__.dto';
// @end

// @if references
/** The fields that refer to other modules' records, and the code of a missing one. */
const REFERENCES = {
  // @each reference
  __ref__Id: { field: '__ref__Id', code: __ITEMS___ERRORS.__ref_code__ },
  // @end
};

// @end
@Injectable()
export class __Items__Service {
  private readonly __items__: ResourceStore<__Item__Entity>;

  constructor(
    @InjectRepository(__Item__Entity) repository: Repository<__Item__Entity>,
    stores: ResourceStores,
    // @each reference
    private readonly __refs__: __RefsService__,
    // @end
  ) {
    // @if mutable
    // Rows change: read from the database every time, so no instance answers an old version.
    this.__items__ = stores.of(repository, { mutable: true });
    // @end
    // @if !mutable
    this.__items__ = stores.of(repository);
    // @end
  }

  /** A page of __nouns__, oldest first, from where the query's cursor points. */
  list(query: List__Items__QueryDto): Promise<Page<__Item__Entity>> {
    return this.__items__.page(query);
  }

  /** Adds __a_noun__; resolves once it is committed (`inTransaction` with it, where the database allows). */
  // @if references
  async create(new__Item__: New__Item__Dto, inTransaction?: WithCreated<__Item__Entity>): Promise<__Item__Entity> {
  // @end
  // @if !references
  create(new__Item__: New__Item__Dto, inTransaction?: WithCreated<__Item__Entity>): Promise<__Item__Entity> {
  // @end
    const row = {
      name: new__Item__.name,
      description: new__Item__.description ?? null,
      status: new__Item__.status ?? DEFAULT___ITEM___STATUS,
      // @each reference
      __ref__Id: new__Item__.__ref__Id,
      // @end
      // @if mutable
      version: 1,
      // @end
    };
    // @if !references
    return this.__items__.create(row, inTransaction);
    // @end
    // @if references
    // @each reference
    await requireReference(this.__refs__.get(row.__ref__Id), REFERENCES.__ref__Id);
    // @end
    return keepReferences(this.__items__.create(row, inTransaction), Object.values(REFERENCES));
    // @end
  }

  /** The __noun__ with this id (one ids can take, as the controller's IdPipe ensures); 404 if none. */
  async get(id: number): Promise<__Item__Entity> {
    const __item__ = await this.__items__.get(id);
    if (!__item__) throw this.notFound(id);
    return __item__;
  }
  // @if update

  /** Applies a merge patch if `matches` accepts the __noun__ as it is (412 if not); 404 if none. */
  async update(
    id: number,
    patch: Update__Item__Dto,
    matches: (__item__: __Item__Entity) => boolean,
  ): Promise<__Item__Entity> {
    // @each reference
    if (patch.__ref__Id !== undefined) await requireReference(this.__refs__.get(patch.__ref__Id), REFERENCES.__ref__Id);
    // @end
    // @if !references
    const updated = await this.__items__.update(id, patch, matches);
    // @end
    // @if references
    const updated = await keepReferences(this.__items__.update(id, patch, matches), Object.values(REFERENCES));
    // @end
    if (!updated) throw this.notFound(id);
    return updated;
  }
  // @end
  // @if delete

  /** Removes the __noun__ if `matches` accepts it (412 if not); 404 if none, 409 if others refer to it. */
  async delete(id: number, matches: (__item__: __Item__Entity) => boolean): Promise<void> {
    if (!(await this.__items__.delete(id, matches))) throw this.notFound(id);
  }
  // @end

  private notFound(id: number): ApiException {
    return new ApiException('not_found', `No __noun__ has id ${id}.`);
  }
}
