import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { PetEntity } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { openDatabase } from './database.options';
import { rowById } from './row-by-id';

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
});
