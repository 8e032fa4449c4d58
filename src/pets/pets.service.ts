import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { Page } from '../common/pagination/page';
import { ResourceStore, ResourceStores } from '../database/resource-store';
import type { UnitOfWork } from '../database/unit-of-work';
import { PetEntity } from './pet.entity';
import { PET_LIFECYCLE, DEFAULT_PET_STATUS } from './pet-status';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { NewPetDto } from './dto/new-pet.dto';
import { PetDto } from './dto/pet.dto';
import { UpdatePetDto } from './dto/update-pet.dto';

@Injectable()
export class PetsService {
  private readonly pets: ResourceStore<PetEntity>;

  constructor(@InjectRepository(PetEntity) repository: Repository<PetEntity>, stores: ResourceStores) {
    this.pets = stores.of(repository, {
      mutable: true,
      events: { type: 'pet', answered: (row) => PetDto.fromEntity(row) },
    });
  }

  /** A page of animals, oldest first, from where the query's cursor points, optionally of one status. */
  list(query: ListPetsQueryDto): Promise<Page<PetEntity>> {
    return this.pets.page(query, { status: query.status });
  }

  /** Adds an animal in `work`'s transaction. */
  create(newPet: NewPetDto, work: UnitOfWork): Promise<PetEntity> {
    const row = {
      name: newPet.name,
      categoryId: newPet.categoryId,
      status: newPet.status ?? DEFAULT_PET_STATUS,
      version: 1,
    };
    return this.pets.create(row, work);
  }

  /** The animal with this id (one ids can take, as the controller's IdPipe ensures); 404 if none. */
  async get(id: number, work?: UnitOfWork): Promise<PetEntity> {
    const pet = await this.pets.get(id, work);
    if (!pet) throw this.notFound(id);
    return pet;
  }

  /**
   * Applies a merge patch in `work`'s transaction where `ifMatch` accepts the animal as it is and
   * the lifecycle allows its status change; 404 if none.
   */
  async update(
    id: number,
    patch: UpdatePetDto,
    ifMatch: (current: PetEntity) => void,
    work: UnitOfWork,
  ): Promise<PetEntity> {
    const change = this.pets.update(
      id,
      patch,
      (current) => {
        ifMatch(current);
        PET_LIFECYCLE.check(current.status, patch.status);
      },
      work,
    );
    const updated = await change;
    if (!updated) throw this.notFound(id);
    return updated;
  }

  private notFound(id: number): ApiException {
    return new ApiException('not_found', `No animal has id ${id}.`);
  }
}
