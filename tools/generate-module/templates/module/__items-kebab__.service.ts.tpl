import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
// @if references
import { keepReferences, Reference, requireReferences } from '../database/references';
// @end
import { ResourceStore, ResourceStores } from '../database/resource-store';
import type { UnitOfWork } from '../database/unit-of-work';
// @each reference
import { __RefsService__ } from '../__ref_folder__/__ref_folder__.service';
// @end
import { __Item__Entity } from './__item-kebab__.entity';
// @if update
import { __ITEM___LIFECYCLE, DEFAULT___ITEM___STATUS } from './__item-kebab__-status';
// @end
// @if !update
import { DEFAULT___ITEM___STATUS } from './__item-kebab__-status';
// @end
// @if references
import { __ITEMS___ERRORS } from './__items-kebab__.errors';
// @end
import { List__Items__QueryDto } from './dto/list-__items-kebab__-query.dto';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';
import { __Item__Dto } from './dto/__item-kebab__.dto';
// @if update
import { Update__Item__Dto } from './dto/update-__item-kebab__.dto';
// @end

@Injectable()
export class __Items__Service {
  private readonly __items__: ResourceStore<__Item__Entity>;
  // @if references
  /** The fields that refer to other modules' records, each with its code and lookup. */
  private readonly references: readonly Reference[];
  // @end

  constructor(
    @InjectRepository(__Item__Entity) repository: Repository<__Item__Entity>,
    stores: ResourceStores,
    // @each reference
    private readonly __refs__: __RefsService__,
    // @end
  ) {
    // @if mutable
    this.__items__ = stores.of(repository, { mutable: true, events: { type: '__item-kebab__', answered: (row) => __Item__Dto.fromEntity(row) } });
    // @end
    // @if !mutable
    this.__items__ = stores.of(repository, { events: { type: '__item-kebab__', answered: (row) => __Item__Dto.fromEntity(row) } });
    // @end
    // @if references
    this.references = [
      // @each reference
      { field: '__ref__Id', code: __ITEMS___ERRORS.__ref_code__, get: (id) => this.__refs__.get(id) },
      // @end
    ];
    // @end
  }

  /** A page of __nouns__, oldest first, from where the query's cursor points, optionally of one status. */
  list(query: List__Items__QueryDto): Promise<Page<__Item__Entity>> {
    return this.__items__.page(query, { status: query.status });
  }

  /** Adds __a_noun__ in `work`'s transaction. */
  // @if references
  async create(new__Item__: New__Item__Dto, work: UnitOfWork): Promise<__Item__Entity> {
  // @end
  // @if !references
  create(new__Item__: New__Item__Dto, work: UnitOfWork): Promise<__Item__Entity> {
  // @end
    const row = {
      name: new__Item__.name,
      // @each field
      // @if optional
      __field__: new__Item__.__field__ ?? null,
      // @end
      // @if !optional
      __field__: new__Item__.__field__,
      // @end
      // @end
      // @if createStatus
      status: new__Item__.status ?? DEFAULT___ITEM___STATUS,
      // @end
      // @if !createStatus
      status: DEFAULT___ITEM___STATUS,
      // @end
      // @each reference
      __ref__Id: new__Item__.__ref__Id,
      // @end
      version: 1,
    };
    // @if !references
    return this.__items__.create(row, work);
    // @end
    // @if references
    await requireReferences(row, this.references);
    return keepReferences(this.__items__.create(row, work), row, this.references);
    // @end
  }

  /** The __noun__ with this id (one ids can take, as the controller's IdPipe ensures); 404 if none. */
  async get(id: number, work?: UnitOfWork): Promise<__Item__Entity> {
    const __item__ = await this.__items__.get(id, work);
    if (!__item__) throw this.notFound(id);
    return __item__;
  }
  // @if update

  /**
   * Applies a merge patch in `work`'s transaction where `ifMatch` accepts the __noun__ as it is and
   * the lifecycle allows its status change; 404 if none.
   */
  async update(
    id: number,
    patch: Update__Item__Dto,
    ifMatch: (current: __Item__Entity) => void,
    work: UnitOfWork,
  ): Promise<__Item__Entity> {
    // @if patchableReferences
    await requireReferences(patch, this.references);
    // @end
    const change = this.__items__.update(
      id,
      patch,
      (current) => {
        ifMatch(current);
        __ITEM___LIFECYCLE.check(current.status, patch.status);
      },
      work,
    );
    // @if !patchableReferences
    const updated = await change;
    // @end
    // @if patchableReferences
    const updated = await keepReferences(change, patch, this.references);
    // @end
    if (!updated) throw this.notFound(id);
    return updated;
  }
  // @end
  // @if delete

  /** Removes the __noun__ in `work`'s transaction if `ifMatch` accepts it; 404 if none, 409 if others refer to it. */
  async delete(id: number, ifMatch: (current: __Item__Entity) => void, work: UnitOfWork): Promise<void> {
    if (!(await this.__items__.delete(id, ifMatch, work))) throw this.notFound(id);
  }
  // @end

  private notFound(id: number): ApiException {
    return new ApiException('not_found', `No __noun__ has id ${id}.`);
  }
}
