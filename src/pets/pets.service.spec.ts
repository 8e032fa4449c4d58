import { MoreThan, Repository } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { encodeCursor } from '../common/pagination/cursor';
import { NewPetDto } from './dto/new-pet.dto';
import { PetCache } from './pet-cache';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';
import { PetsService } from './pets.service';

// Reads go through the repository's find and findOneBy here: with no plain SELECT, pages fall
// back to find, and reads by id are mocked onto findOneBy. The hand-built SQL of both is tested
// on real databases (find-page.spec.ts, row-by-id.spec.ts, and the e2e suites on SQLite and
// PostgreSQL).
jest.mock('../database/plain-select', () => ({ plainSelect: () => undefined }));
// Inserts go through the repository's (or the transaction's) insert here, as TypeORM's own
// would; the hand-built INSERT is tested on real databases (insert-rows.spec.ts, e2e suites).
jest.mock('../database/insert-rows', () => ({
  rowsInserter:
    (repository: { insert: (values: object) => Promise<{ identifiers: { id: unknown }[] }> }) =>
    async (
      rows: object[],
      manager?: { insert: (target: unknown, values: object) => Promise<{ identifiers: { id: unknown }[] }> },
    ) => {
      const values = rows.length === 1 ? rows[0] : rows;
      const result = manager ? await manager.insert('pets', values) : await repository.insert(values);
      return rows.map((row, index) => ({ id: Number(result.identifiers[index].id), ...row }));
    },
}));
jest.mock('../database/row-by-id', () => ({
  rowById: (repository: { findOneBy: (where: object) => Promise<unknown> }) => (id: number) =>
    repository.findOneBy({ id }),
}));

type MockRepository = {
  find: jest.Mock;
  insert: jest.Mock;
  findOneBy: jest.Mock;
  metadata: object;
  manager: { connection: { options: { type: string } } };
};

function newPet(fields: Partial<NewPetDto>): NewPetDto {
  return Object.assign(new NewPetDto(), fields);
}

async function notFound(promise: Promise<unknown>) {
  let thrown: unknown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ApiException);
  const error = thrown as ApiException;
  return { code: error.code, status: error.getStatus(), message: error.message, details: error.details };
}

describe('PetsService', () => {
  let repository: MockRepository;
  let service: PetsService;

  const rex: PetEntity = { id: 1, name: 'Rex', categoryId: 7, status: PetStatus.available };
  const tom: PetEntity = { id: 2, name: 'Tom', categoryId: 3, status: null };

  beforeEach(() => {
    repository = {
      find: jest.fn(),
      insert: jest.fn(),
      findOneBy: jest.fn(),
      metadata: {},
      manager: { connection: { options: { type: 'sqlite' } } },
    };
    service = new PetsService(repository as unknown as Repository<PetEntity>);
  });

  describe('list', () => {
    it('asks for one row more than the page, in ascending id order, without a filter', async () => {
      repository.find.mockResolvedValue([rex, tom]);

      await expect(service.list({ limit: 20 })).resolves.toEqual({ items: [rex, tom] });
      expect(repository.find).toHaveBeenCalledTimes(1);
      expect(repository.find).toHaveBeenCalledWith({ where: {}, order: { id: 'ASC' }, take: 21 });
    });

    it('filters by status, starts after the cursor id, and says when more follow', async () => {
      repository.find.mockResolvedValue([rex, tom]);

      const cursor = encodeCursor({ afterId: 40, filter: PetStatus.sold });
      await expect(service.list({ limit: 1, status: PetStatus.sold, cursor })).resolves.toEqual({
        items: [rex],
        nextCursor: encodeCursor({ afterId: rex.id, filter: PetStatus.sold }),
      });
      expect(repository.find).toHaveBeenCalledWith({
        where: { status: PetStatus.sold, id: MoreThan(40) },
        order: { id: 'ASC' },
        take: 2,
      });
    });

    it('refuses a cursor of another filter before asking the database', async () => {
      const cursor = encodeCursor({ afterId: 40, filter: PetStatus.sold });
      await expect(service.list({ limit: 1, cursor })).rejects.toThrow(ApiException);
      expect(repository.find).not.toHaveBeenCalled();
    });

    it('passes a repository failure on', async () => {
      repository.find.mockRejectedValue(new Error('SQLITE_BUSY'));

      await expect(service.list({ limit: 1 })).rejects.toThrow('SQLITE_BUSY');
    });
  });

  describe('on PostgreSQL', () => {
    it('inserts under the advisory lock and runs the work given for each animal in the same transaction', async () => {
      const statements: string[] = [];
      const manager = {
        query: jest.fn((sql: string) => {
          statements.push(sql);
          return Promise.resolve([]);
        }),
        insert: jest.fn(() => {
          statements.push('INSERT');
          return Promise.resolve({ identifiers: [{ id: '41' }], generatedMaps: [], raw: [] });
        }),
      };
      const transaction = jest.fn((work: (m: typeof manager) => Promise<unknown>) => work(manager));
      Object.assign(repository.manager, { transaction });
      repository.manager.connection.options.type = 'postgres';
      const inTransaction = jest.fn((m: unknown, pet: PetEntity) => {
        statements.push(`record ${pet.id}`);
        expect(m).toBe(manager);
        return Promise.resolve();
      });

      await expect(service.create(newPet({ name: 'Rex', categoryId: 7 }), inTransaction)).resolves.toEqual({
        id: 41,
        name: 'Rex',
        categoryId: 7,
        status: null,
      });
      expect(transaction).toHaveBeenCalledTimes(1);
      expect(statements).toEqual(['SELECT pg_advisory_xact_lock($1)', 'INSERT', 'record 41']);
    });
  });

  describe('reads on a broken connection', () => {
    it('are retried once', async () => {
      repository.findOneBy
        .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'))
        .mockResolvedValueOnce(rex);

      await expect(service.get(1)).resolves.toEqual(rex);
      expect(repository.findOneBy).toHaveBeenCalledTimes(2);
    });
  });

  describe('create', () => {
    it('inserts the animal and returns it with the id the database gave', async () => {
      repository.insert.mockResolvedValue({ identifiers: [{ id: 12 }], generatedMaps: [], raw: 12 });

      await expect(
        service.create(newPet({ name: 'Rex', categoryId: 7, status: PetStatus.pending })),
      ).resolves.toEqual({
        id: 12,
        name: 'Rex',
        categoryId: 7,
        status: 'pending',
      });
      expect(repository.insert).toHaveBeenCalledTimes(1);
      expect(repository.insert).toHaveBeenCalledWith({ name: 'Rex', categoryId: 7, status: 'pending' });
    });

    it('stores and returns a null status when none was sent', async () => {
      repository.insert.mockResolvedValue({ identifiers: [{ id: 3 }], generatedMaps: [], raw: 3 });

      await expect(service.create(newPet({ name: 'Tom', categoryId: 3 }))).resolves.toEqual({
        id: 3,
        name: 'Tom',
        categoryId: 3,
        status: null,
      });
      expect(repository.insert).toHaveBeenCalledWith({ name: 'Tom', categoryId: 3, status: null });
    });

    it('turns an id the driver gives as a string into a number', async () => {
      repository.insert.mockResolvedValue({
        identifiers: [{ id: '9007199254740991' }],
        generatedMaps: [],
        raw: 0,
      });

      const pet = await service.create(newPet({ name: 'Rex', categoryId: 1 }));

      expect(pet.id).toBe(9007199254740991);
    });

    it('stores the name exactly as sent', async () => {
      repository.insert.mockResolvedValue({ identifiers: [{ id: 4 }], generatedMaps: [], raw: 4 });

      await service.create(newPet({ name: '  Zoë 😀  ', categoryId: 1 }));

      expect(repository.insert).toHaveBeenCalledWith({ name: '  Zoë 😀  ', categoryId: 1, status: null });
    });

    it('fails when the insert fails', async () => {
      repository.insert.mockRejectedValue(new Error('SQLITE_FULL'));

      await expect(service.create(newPet({ name: 'Rex', categoryId: 1 }))).rejects.toThrow('SQLITE_FULL');
    });
  });

  describe('get', () => {
    it('returns the animal with the id', async () => {
      repository.findOneBy.mockResolvedValue(tom);

      await expect(service.get(2)).resolves.toEqual(tom);
      expect(repository.findOneBy).toHaveBeenCalledWith({ id: 2 });
    });

    it('throws not_found when no animal has the id', async () => {
      repository.findOneBy.mockResolvedValue(null);

      expect(await notFound(service.get(99))).toEqual({
        code: 'not_found',
        status: 404,
        message: 'No animal has id 99.',
        details: undefined,
      });
      expect(repository.findOneBy).toHaveBeenCalledWith({ id: 99 });
    });
  });
});

describe('PetsService with its read caches and group commit', () => {
  let repository: MockRepository;
  let service: PetsService;

  const page = (count: number, from = 1): PetEntity[] =>
    Array.from({ length: count }, (_, index) => ({
      id: from + index,
      name: `Pet ${from + index}`,
      categoryId: 1,
      status: null,
    }));

  beforeEach(() => {
    repository = {
      find: jest.fn(),
      insert: jest.fn(),
      findOneBy: jest.fn(),
      metadata: {},
      manager: { connection: { options: { type: 'sqlite' } } },
    };
    service = new PetsService(repository as unknown as Repository<PetEntity>, new PetCache(100));
  });

  it('reads a page that more animals follow once and then serves it from memory', async () => {
    repository.find.mockResolvedValue(page(4));

    await service.list({ limit: 3 });
    await expect(service.list({ limit: 3 })).resolves.toEqual({
      items: page(3),
      nextCursor: encodeCursor({ afterId: 3, filter: null }),
    });
    expect(repository.find).toHaveBeenCalledTimes(1);
  });

  it('asks the database for a last page every time, so it shows new animals', async () => {
    repository.find.mockResolvedValueOnce(page(3)).mockResolvedValueOnce(page(4));

    await expect(service.list({ limit: 3 })).resolves.toEqual({ items: page(3) });
    await expect(service.list({ limit: 3 })).resolves.toEqual({
      items: page(3),
      nextCursor: encodeCursor({ afterId: 3, filter: null }),
    });
    expect(repository.find).toHaveBeenCalledTimes(2);
  });

  it('keeps the pages of each filter, limit and cursor apart', async () => {
    repository.find.mockResolvedValueOnce(page(3)).mockResolvedValueOnce(page(3, 10));

    await service.list({ limit: 2 });
    const cursor = encodeCursor({ afterId: 9, filter: PetStatus.sold });
    await expect(service.list({ limit: 2, status: PetStatus.sold, cursor })).resolves.toMatchObject({
      items: page(2, 10),
    });
    expect(repository.find).toHaveBeenLastCalledWith({
      where: { status: PetStatus.sold, id: MoreThan(9) },
      order: { id: 'ASC' },
      take: 3,
    });
  });

  it('reads an animal by id once', async () => {
    repository.findOneBy.mockResolvedValue(page(1, 5)[0]);

    await service.get(5);
    await expect(service.get(5)).resolves.toEqual(page(1, 5)[0]);
    expect(repository.findOneBy).toHaveBeenCalledTimes(1);
  });

  it('does not remember a 404: the id may be created later', async () => {
    repository.findOneBy.mockResolvedValueOnce(null).mockResolvedValueOnce(page(1, 5)[0]);

    await expect(service.get(5)).rejects.toThrow('No animal has id 5.');
    await expect(service.get(5)).resolves.toEqual(page(1, 5)[0]);
  });

  it('inserts concurrent creates with one INSERT and gives each its own id', async () => {
    repository.insert.mockResolvedValue({
      identifiers: [{ id: 8 }, { id: 9 }, { id: 10 }],
      generatedMaps: [],
    });

    const created = await Promise.all(
      ['A', 'B', 'C'].map((name, index) =>
        service.create(
          newPet({ name, categoryId: index + 1, status: index === 1 ? PetStatus.sold : undefined }),
        ),
      ),
    );

    expect(created).toEqual([
      { id: 8, name: 'A', categoryId: 1, status: null },
      { id: 9, name: 'B', categoryId: 2, status: 'sold' },
      { id: 10, name: 'C', categoryId: 3, status: null },
    ]);
    expect(repository.insert).toHaveBeenCalledTimes(1);
    expect(repository.insert).toHaveBeenCalledWith([
      { name: 'A', categoryId: 1, status: null },
      { name: 'B', categoryId: 2, status: 'sold' },
      { name: 'C', categoryId: 3, status: null },
    ]);
  });

  it('reads a created animal from the database the first time it is asked for', async () => {
    repository.insert.mockResolvedValue({ identifiers: [{ id: 4 }], generatedMaps: [] });
    const pet = await service.create(newPet({ name: 'Rex', categoryId: 7 }));
    repository.findOneBy.mockResolvedValue(pet);

    await expect(service.get(4)).resolves.toEqual(pet);
    await expect(service.get(4)).resolves.toEqual(pet);
    expect(repository.findOneBy).toHaveBeenCalledTimes(1);
  });

  it('fails every create of a group whose INSERT failed', async () => {
    repository.insert.mockRejectedValueOnce(new Error('SQLITE_FULL'));

    const results = await Promise.allSettled([
      service.create(newPet({ name: 'A', categoryId: 1 })),
      service.create(newPet({ name: 'B', categoryId: 1 })),
    ]);

    expect(results).toEqual([
      { status: 'rejected', reason: new Error('SQLITE_FULL') },
      { status: 'rejected', reason: new Error('SQLITE_FULL') },
    ]);
    expect(repository.insert).toHaveBeenCalledTimes(1);
  });
});
