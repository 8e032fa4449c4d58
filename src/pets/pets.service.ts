import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { InsertResult, MoreThan, Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { NewPetDto } from './dto/new-pet.dto';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';

export interface PetQuery {
  limit: number;
  status?: PetStatus;
  /** Start after this id (keyset pagination); 0 for the first page. */
  afterId?: number;
}

export interface PetPage {
  pets: PetEntity[];
  /** Whether animals matching the query come after this page. */
  hasMore: boolean;
}

/** Any number, shared by every instance: held while inserting into `pets` on PostgreSQL. */
const PETS_INSERT_LOCK = 7_348_214_902;

@Injectable()
export class PetsService {
  constructor(@InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>) {}

  /**
   * A page of animals in ascending id order (oldest first) after `afterId`: keyset pagination,
   * so a page costs the same however deep it is. One row more than asked says whether more follow.
   */
  async list(query: PetQuery): Promise<PetPage> {
    const rows = await this.pets.find({
      where: {
        ...(query.status ? { status: query.status } : {}),
        ...(query.afterId ? { id: MoreThan(query.afterId) } : {}),
      },
      order: { id: 'ASC' },
      take: query.limit + 1,
    });
    return { pets: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  /** Adds an animal; resolves once the row is committed. */
  async create(newPet: NewPetDto): Promise<PetEntity> {
    const pet: Omit<PetEntity, 'id'> = {
      name: newPet.name,
      categoryId: newPet.categoryId,
      status: newPet.status ?? null,
    };
    const result = await this.insertInIdOrder(pet);
    return { id: Number(result.identifiers[0].id), ...pet };
  }

  /**
   * Ids must become visible in ascending order for keyset pages to have no gaps: a reader that
   * has passed id N must never see a smaller id appear later. SQLite has one writer, so ids are
   * assigned in commit order. PostgreSQL's sequence hands out ids before commit, so concurrent
   * inserts take a transaction-scoped advisory lock and commit one after another.
   */
  private insertInIdOrder(pet: Omit<PetEntity, 'id'>): Promise<InsertResult> {
    if (this.pets.manager.connection.options.type !== 'postgres') return this.pets.insert(pet);
    return this.pets.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [PETS_INSERT_LOCK]);
      return manager.insert(PetEntity, pet);
    });
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
