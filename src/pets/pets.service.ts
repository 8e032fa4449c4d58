import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { GroupCommit } from '../database/group-commit';
import { NewPetDto } from './dto/new-pet.dto';
import { PetCache } from './pet-cache';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';

export interface PetQuery {
  limit: number;
  status?: PetStatus;
}

type NewPetRow = Omit<PetEntity, 'id'>;

@Injectable()
export class PetsService {
  /** Concurrent creates are inserted together, one statement per group (docs/performance.md). */
  private readonly inserts = new GroupCommit<NewPetRow, PetEntity>((pets) => this.insert(pets));

  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly cache: PetCache = new PetCache(),
  ) {}

  /** A page of animals in ascending id order (oldest first), so pages are stable. */
  async list(query: PetQuery): Promise<readonly PetEntity[]> {
    const cached = this.cache.page(query);
    if (cached) return cached;
    const generation = this.cache.generation;
    const pets = await this.pets.find({
      where: query.status ? { status: query.status } : {},
      order: { id: 'ASC' },
      take: query.limit,
    });
    this.cache.putPage(query, pets, generation);
    return pets;
  }

  /**
   * Adds an animal; resolves once the row is committed. The new animal is not put in the cache:
   * under a stream of creates that would fill it with animals nobody may read.
   */
  create(newPet: NewPetDto): Promise<PetEntity> {
    return this.inserts.add({
      name: newPet.name,
      categoryId: newPet.categoryId,
      status: newPet.status ?? null,
    });
  }

  /** The animal with this id; `null` stands for an id no animal can have. */
  async get(id: number | null): Promise<PetEntity> {
    const cached = id === null ? undefined : this.cache.pet(id);
    if (cached) return cached;
    const generation = this.cache.generation;
    const pet = id === null ? null : await this.pets.findOneBy({ id });
    if (!pet) {
      throw new ApiException('not_found', id === null ? 'No animal has this id.' : `No animal has id ${id}.`);
    }
    this.cache.putPet(pet, generation);
    return pet;
  }

  /** One INSERT for the whole group: atomic, and one commit however many rows it holds. */
  private async insert(pets: NewPetRow[]): Promise<PetEntity[]> {
    const result = await this.pets.insert(pets.length === 1 ? pets[0] : pets);
    return pets.map((pet, index) => ({ id: Number(result.identifiers[index].id), ...pet }));
  }
}
