import {
  AfterLoad,
  Column,
  DataSource,
  DeleteDateColumn,
  Entity,
  EntitySubscriberInterface,
  EventSubscriber,
  FindOptionsWhere,
  In,
  MoreThan,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { loadConfig } from '../config/app-config';
import { decodeCursor } from '../common/pagination/cursor';
import { PetEntity } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { withEntitiesDatabase } from '../../test/support/entities-database';
import { openDatabase } from './database.options';
import { findPageAfter } from './find-page';

@Entity({ name: 'archived' })
class Archived {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  kind!: string;

  @DeleteDateColumn()
  deletedAt!: Date | null;
}

@Entity({ name: 'tagged' })
class Tagged {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  kind!: string;

  @Column({ type: 'integer' })
  size!: number;
}

@Entity({ name: 'hooked' })
class Hooked {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  kind!: string;

  loaded = false;

  @AfterLoad()
  markLoaded(): void {
    this.loaded = true;
  }
}

@Entity({ name: 'watched' })
class Watched {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  kind!: string;
}

const seenBySubscriber: number[] = [];

@EventSubscriber()
class WatchedSubscriber implements EntitySubscriberInterface<Watched> {
  listenTo() {
    return Watched;
  }

  afterLoad(entity: Watched): void {
    seenBySubscriber.push(entity.id);
  }
}

const statuses = [PetStatus.available, PetStatus.pending, PetStatus.sold, null];

describe('findPageAfter (a real, migrated in-memory SQLite database)', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await openDatabase(loadConfig({ DATABASE_PATH: ':memory:' }));
    await dataSource.getRepository(PetEntity).insert(
      Array.from({ length: 23 }, (_, index) => ({
        name: `Pet ${index + 1} ✓`,
        categoryId: index % 5 === 0 ? 9007199254740991 : index,
        status: statuses[index % statuses.length],
      })),
    );
  });

  afterAll(async () => {
    await dataSource.destroy();
  });

  /** What `repository.find` gives for the same page: the reference. */
  function viaFind(where: FindOptionsWhere<PetEntity>, afterId: number, take: number) {
    return dataSource.getRepository(PetEntity).find({
      where: { ...where, ...(afterId > 0 ? { id: MoreThan(afterId) } : {}) },
      order: { id: 'ASC' },
      take,
    });
  }

  it('reads plain equality filters with its own SELECT, giving exactly the rows find gives', async () => {
    const repository = dataSource.getRepository(PetEntity);
    const find = jest.spyOn(repository, 'find');
    try {
      for (const status of [undefined, PetStatus.available, PetStatus.sold]) {
        const where = status ? { status } : {};
        for (const afterId of [0, 1, 7, 22, 23, 40]) {
          for (const limit of [1, 3, 30]) {
            const filter = status ? { where, value: status, name: 'status' } : undefined;
            const page = await findPageAfter(repository, limit, afterId, filter);
            const expected = await viaFind(where, afterId, limit + 1);
            expect(page.items).toStrictEqual(expected.slice(0, limit));
            for (const item of page.items) expect(item).toBeInstanceOf(PetEntity);
            if (expected.length > limit) {
              expect(decodeCursor(page.nextCursor!, status ?? null, 'status').afterId).toBe(
                expected[limit - 1].id,
              );
            } else {
              expect(page.nextCursor).toBeUndefined();
            }
          }
        }
      }
      // Only the reference calls find: the pages themselves were read by the hand-built SELECT.
      expect(find.mock.calls.length).toBe(3 * 6 * 3);
    } finally {
      find.mockRestore();
    }
  });

  it('gives a row with a large integer and odd text back typed as find types it', async () => {
    const [first] = (await findPageAfter(dataSource.getRepository(PetEntity), 1, 0)).items;
    expect(first).toEqual({ id: 1, name: 'Pet 1 ✓', categoryId: 9007199254740991, status: 'available' });
  });

  it('leaves TypeORM operators and columns with transformers to find', async () => {
    const repository = dataSource.getRepository(PetEntity);
    const find = jest.spyOn(repository, 'find');
    try {
      const byOperator = { status: In([PetStatus.pending, PetStatus.sold]) };
      const page = await findPageAfter(repository, 4, 2, {
        where: byOperator,
        value: 'some',
        name: 'status',
      });
      expect(page.items).toStrictEqual((await viaFind(byOperator, 2, 5)).slice(0, 4));
      expect(page.items.map((pet) => pet.status)).toEqual(['sold', 'pending', 'sold', 'pending']);

      const byTransformed = { categoryId: 9007199254740991 };
      const big = await findPageAfter(repository, 10, 0, {
        where: byTransformed,
        value: 'big',
        name: 'category',
      });
      expect(big.items.map((pet) => pet.id)).toEqual([1, 6, 11, 16, 21]);
      expect(find).toHaveBeenCalledTimes(3);
    } finally {
      find.mockRestore();
    }
  });

  it('refuses a filter on id, which the page position owns', async () => {
    await expect(
      findPageAfter(dataSource.getRepository(PetEntity), 5, 0, { where: { id: 3 }, value: 'x', name: 'id' }),
    ).rejects.toThrow('findPage: a filter must not constrain id');
  });

  it('binds several filtered columns in their own order, in either key order, with and without a position', async () => {
    await withEntitiesDatabase({ entities: [Tagged] }, async (other) => {
      const repository = other.getRepository(Tagged);
      await repository.insert(
        Array.from({ length: 30 }, (_, index) => ({ kind: index % 2 === 0 ? 'a' : 'b', size: index % 3 })),
      );
      const find = jest.spyOn(repository, 'find');
      for (const where of [
        { kind: 'a', size: 1 },
        { size: 1, kind: 'a' },
        { kind: 'b', size: 0 },
        { size: 2, kind: 'b' },
      ]) {
        for (const afterId of [0, 4, 13]) {
          const page = await findPageAfter(repository, 3, afterId, { where, value: 'x', name: 'kind' });
          const expected = rowsOf(30, afterId).filter(
            (row) => row.kind === where.kind && row.size === where.size,
          );
          expect(page.items.map((row) => ({ ...row }))).toEqual(expected.slice(0, 3));
          expect(page.nextCursor !== undefined).toBe(expected.length > 3);
        }
      }
      expect(find).not.toHaveBeenCalled();
    });

    function rowsOf(count: number, afterId: number) {
      return Array.from({ length: count }, (_, index) => ({
        id: index + 1,
        kind: index % 2 === 0 ? 'a' : 'b',
        size: index % 3,
      })).filter((row) => row.id > afterId);
    }
  });

  it('leaves entities with listeners or subscribers to find, which runs them', async () => {
    await withEntitiesDatabase(
      { entities: [Hooked, Watched], subscribers: [WatchedSubscriber] },
      async (other) => {
        await other.getRepository(Hooked).insert([{ kind: 'a' }, { kind: 'a' }]);
        await other.getRepository(Watched).insert([{ kind: 'a' }, { kind: 'a' }]);
        const hooked = await findPageAfter(other.getRepository(Hooked), 10, 0, {
          where: { kind: 'a' },
          value: 'a',
          name: 'kind',
        });
        expect(hooked.items.map((row) => row.loaded)).toEqual([true, true]);
        await findPageAfter(other.getRepository(Watched), 10, 0, {
          where: { kind: 'a' },
          value: 'a',
          name: 'kind',
        });
        expect(seenBySubscriber).toEqual([1, 2]);
      },
    );
  });

  it('leaves an entity that is not plain to find, which hides soft-deleted rows', async () => {
    await withEntitiesDatabase({ entities: [Archived] }, async (other) => {
      const repository = other.getRepository(Archived);
      await repository.insert([{ kind: 'a' }, { kind: 'a' }, { kind: 'b' }, { kind: 'a' }]);
      await repository.softDelete({ id: 2 });
      const page = await findPageAfter(repository, 10, 0, { where: { kind: 'a' }, value: 'a', name: 'kind' });
      expect(page.items.map((row) => row.id)).toEqual([1, 4]);
    });
  });
});
