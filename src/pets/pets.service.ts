import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
import { ResourceStore, ResourceStores, WithCreated } from '../database/resource-store';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { NewPetDto } from './dto/new-pet.dto';
import { PetEntity } from './pet.entity';

@Injectable()
export class PetsService {
  private readonly pets: ResourceStore<PetEntity>;

  constructor(@InjectRepository(PetEntity) repository: Repository<PetEntity>, stores: ResourceStores) {
    this.pets = stores.of(repository);
  }

  /** A page of animals, oldest first, from where the query's cursor points, optionally of one status. */
  list(query: ListPetsQueryDto): Promise<Page<PetEntity>> {
    return this.pets.page(query, { status: query.status });
  }

  /** Adds an animal; resolves once it is committed (`inTransaction` with it, where the database allows). */
  create(newPet: NewPetDto, inTransaction?: WithCreated<PetEntity>): Promise<PetEntity> {
    const row = { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? null };
    return this.pets.create(row, inTransaction);
  }

  /** The animal with this id (one ids can take, as the controller's IdPipe ensures); 404 if none. */
  async get(id: number): Promise<PetEntity> {
    const pet = await this.pets.get(id);
    if (!pet) throw new ApiException('not_found', `No animal has id ${id}.`);
    return pet;
  }
}
