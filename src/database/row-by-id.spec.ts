import { Column, DataSource, DeleteDateColumn, Entity, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { PetEntity } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { withEntitiesDatabase } from '../../test/support/entities-database';
import { openDatabase } from './database.options';
import { rowById } from './row-by-id';

@Entity({ name: 'owners' })
class Owner {
  @PrimaryGeneratedColumn()
  id!: number;
}

@Entity({ name: 'owned' })
class Owned {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', select: false })
  secret!: string;
}

@Entity({ name: 'archived' })
class Archived {
  @PrimaryGeneratedColumn()
  id!: number;

  @DeleteDateColumn()
  deletedAt!: Date | null;
}

@Entity({ name: 'belongings' })
class Belonging {
  @PrimaryGeneratedColumn()
  id!: number;

  @ManyToOne(() => Owner)
  owner!: Owner;
}

describe('rowById (a real, migrated in-memory SQLite database)', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await openDatabase(loadConfig({ DATABASE_PATH: ':memory:' }));
    await dataSource.getRepository(PetEntity).insert([
      { name: 'Rex', categoryId: 9007199254740991, status: PetStatus.sold },
      { name: 'Tom', categoryId: 3, status: null },
    ]);
  });

  afterAll(async () => {
    await dataSource.destroy();
  });

  it('gives exactly what findOneBy gives: an entity with every column, typed and transformed', async () => {
    const repository = dataSource.getRepository(PetEntity);
    const byId = rowById(repository);
    for (const id of [1, 2]) {
      const row = await byId(id);
      expect(row).toBeInstanceOf(PetEntity);
      expect(row).toStrictEqual(await repository.findOneBy({ id }));
    }
    expect(await byId(1)).toEqual({ id: 1, name: 'Rex', categoryId: 9007199254740991, status: 'sold' });
  });

  it('gives null for an id no row has', async () => {
    await expect(rowById(dataSource.getRepository(PetEntity))(3)).resolves.toBeNull();
  });

  it('refuses an entity with relations, unselected columns or soft delete, which findOneBy reads differently', async () => {
    await withEntitiesDatabase({ entities: [Owner, Owned, Archived, Belonging] }, async (other) => {
      for (const entity of [Belonging, Owned, Archived]) {
        await expect(rowById(other.getRepository(entity))(1)).rejects.toThrow(
          `rowById: ${entity.name} is not an entity of plain columns`,
        );
      }
      await expect(rowById(other.getRepository(Owner))(1)).resolves.toBeNull();
    });
  });
});
