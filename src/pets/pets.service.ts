import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { decodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import { GroupCommit } from '../database/group-commit';
import type { WithCreated } from '../database/insert-one';
import { findPageAfter } from '../database/find-page';
import { readWithRetry } from '../database/outage';
import { rowById } from '../database/row-by-id';
import { rowsInserter } from '../database/insert-rows';
import { NewPetDto } from './dto/new-pet.dto';
import { PetCache } from './pet-cache';
import { ListPetsQueryDto } from './dto/list-pets-query.dto';
import { PetQuery } from './pet-page';
import { PetEntity } from './pet.entity';

type NewPetRow = Omit<PetEntity, 'id'>;

/** Work that must commit together with the new animal (see `PetsService.create`). */
export type WithCreatedPet = WithCreated<PetEntity>;

interface PendingCreate {
  row: NewPetRow;
  inTransaction?: WithCreatedPet;
}

/** Any number, shared by every instance: held while inserting into `pets` on PostgreSQL. */
const PETS_INSERT_LOCK = 7_348_214_902;

@Injectable()
export class PetsService {
  /** Concurrent creates are inserted together, one statement per group (docs/performance.md). */
  private readonly inserts = new GroupCommit<PendingCreate, PetEntity>((pets) => this.insert(pets));

  /** A cache miss of `get`: one SELECT built once (see `rowById`). */
  private readonly petById: (id: number) => Promise<PetEntity | null>;

  /** A group's INSERT, without the query builder (see `rowsInserter`). */
  private readonly insertRows: ReturnType<typeof rowsInserter<PetEntity>>;

  constructor(
    @InjectRepository(PetEntity) private readonly pets: Repository<PetEntity>,
    private readonly cache: PetCache = new PetCache(),
  ) {
    this.petById = rowById(pets);
    this.insertRows = rowsInserter(pets);
  }

  /**
   * A page of animals in ascending id order (oldest first), from where `cursor` points (400 if it
   * is not one of this list's), with the cursor of the next page when more animals match. Full
   * pages are answered from the cache, next cursor included.
   */
  async list(request: ListPetsQueryDto): Promise<Page<PetEntity>> {
    const status = request.status;
    const afterId = request.cursor === undefined ? 0 : decodeCursor(request.cursor, status, 'status').afterId;
    const query: PetQuery = { limit: request.limit, status, afterId };
    const cached = this.cache.page(query);
    if (cached) return cached;
    const generation = this.cache.generation;
    const filter = status && { where: { status }, value: status, name: 'status' };
    const page = await findPageAfter(this.pets, request.limit, afterId, filter);
    this.cache.putPage(query, page, generation);
    return page;
  }

  /**
   * Adds an animal; resolves once the row is committed. The new animal is not put in the cache:
   * under a stream of creates that would fill it with animals nobody may read.
   *
   * On PostgreSQL, `inTransaction` runs inside the transaction that inserts the animal: both
   * commit or neither, even when the connection breaks before the commit is confirmed. SQLite
   * offers no transaction of its own (TypeORM shares one connection among all requests, so other
   * requests' statements would join it), so it is not called there; a failed SQLite statement
   * has not committed, so there is no unknown outcome to guard against.
   */
  create(newPet: NewPetDto, inTransaction?: WithCreatedPet): Promise<PetEntity> {
    return this.inserts.add({
      row: { name: newPet.name, categoryId: newPet.categoryId, status: newPet.status ?? null },
      inTransaction,
    });
  }

  /** The animal with this id (one ids can take: 1 to 2^53-1, as the controller's pipe ensures). */
  async get(id: number): Promise<PetEntity> {
    const cached = this.cache.pet(id);
    if (cached) return cached;
    const generation = this.cache.generation;
    const pet = await readWithRetry(() => this.petById(id));
    if (!pet) throw new ApiException('not_found', `No animal has id ${id}.`);
    this.cache.putPet(pet, generation);
    return pet;
  }

  /**
   * One INSERT for the whole group: atomic, and one commit however many rows it holds.
   *
   * Ids must become visible in ascending order for keyset pages to have no gaps (and for full
   * pages to stay cacheable): a reader that has passed id N must never see a smaller id appear
   * later. SQLite has one writer, so ids are assigned in commit order. PostgreSQL's sequence
   * hands out ids before commit, so inserts take a transaction-scoped advisory lock and commit
   * one after another, across every instance.
   */
  private async insert(pending: PendingCreate[]): Promise<PetEntity[]> {
    const rows = pending.map((create) => create.row);
    if (this.pets.manager.connection.options.type !== 'postgres') return this.insertRows(rows);
    return this.pets.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [PETS_INSERT_LOCK]);
      const pets = await this.insertRows(rows, manager);
      for (const [index, create] of pending.entries()) await create.inTransaction?.(manager, pets[index]);
      return pets;
    });
  }
}
