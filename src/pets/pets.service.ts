import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { NewPetDto } from './dto/new-pet.dto';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';

export interface PetQuery {
  limit: number;
  status?: PetStatus;
}

@Injectable()
export class PetsService {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  /** A page of animals in ascending id order (oldest first), so pages are stable. */
  list(query: PetQuery): Promise<PetEntity[]> {
    return this.pets.find({
      where: query.status ? { status: query.status } : {},
      order: { id: 'ASC' },
      take: query.limit,
    });
  }

  /** Adds an animal; resolves once the row is committed. */
  async create(newPet: NewPetDto): Promise<PetEntity> {
    const pet: Omit<PetEntity, 'id'> = {
      name: newPet.name,
      categoryId: newPet.categoryId,
      status: newPet.status ?? null,
    };
    const result = await this.pets.insert(pet);
    return { id: Number(result.identifiers[0].id), ...pet };
  }

  /** The animal with this id; `null` stands for an id no animal can have. */
  async get(id: number | null): Promise<PetEntity> {
    const pet = id === null ? null : await this.pets.findOneBy({ id });
    if (!pet) {
      throw new ApiException('not_found', id === null ? 'No animal has this id.' : `No animal has id ${id}.`);
    }
    return pet;
  }
}
