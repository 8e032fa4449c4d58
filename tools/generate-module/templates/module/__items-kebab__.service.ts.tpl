import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
import { ResourceStore, ResourceStores, WithCreated } from '../database/resource-store';
import { __Item__Entity } from './__item-kebab__.entity';
import { List__Items__QueryDto } from './dto/list-__items-kebab__-query.dto';
import { New__Item__Dto } from './dto/new-__item-kebab__.dto';

@Injectable()
export class __Items__Service {
  private readonly __items__: ResourceStore<__Item__Entity>;

  constructor(@InjectRepository(__Item__Entity) repository: Repository<__Item__Entity>, stores: ResourceStores) {
    this.__items__ = stores.of(repository);
  }

  /** A page of __nouns__, oldest first, from where the query's cursor points. */
  list(query: List__Items__QueryDto): Promise<Page<__Item__Entity>> {
    return this.__items__.page(query);
  }

  /** Adds __a_noun__; resolves once it is committed (`inTransaction` with it, where the database allows). */
  create(new__Item__: New__Item__Dto, inTransaction?: WithCreated<__Item__Entity>): Promise<__Item__Entity> {
    const row = { name: new__Item__.name, description: new__Item__.description ?? null };
    return this.__items__.create(row, inTransaction);
  }

  /** The __noun__ with this id (one ids can take, as the controller's IdPipe ensures); 404 if none. */
  async get(id: number): Promise<__Item__Entity> {
    const __item__ = await this.__items__.get(id);
    if (!__item__) throw new ApiException('not_found', `No __noun__ has id ${id}.`);
    return __item__;
  }
}
