import { Column, DataSource, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { loadConfig } from '../config/app-config';
import { PetEntity } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { withEntitiesDatabase } from '../../test/support/entities-database';
import { openDatabase } from './database.options';
import { rowsInserter } from './insert-rows';

@Entity({ name: 'notes' })
class Note {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  text!: string;

  @Column({ type: 'varchar', default: 'draft' })
  state!: string;
}

describe('rowsInserter (a real, migrated in-memory SQLite database)', () => {
  let dataSource: DataSource;

  beforeEach(async () => {
    dataSource = await openDatabase(loadConfig({ DATABASE_PATH: ':memory:' }));
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it('stores what repository.insert stores and gives each row its id, in order', async () => {
    const repository = dataSource.getRepository(PetEntity);
    const insert = jest.spyOn(repository.manager, 'insert');
    const insertRows = rowsInserter(repository);
    const rows = [
      { name: 'Rex', categoryId: 9007199254740991, status: PetStatus.sold },
      { name: '  Zoë 😀 \u0000', categoryId: 1, status: null },
      { name: "O'Brien; DROP TABLE pets", categoryId: 3, status: PetStatus.available },
    ];

    const first = await insertRows(rows.slice(0, 1));
    const rest = await insertRows(rows.slice(1));
    const viaTypeorm = await repository.insert({ name: 'Tom', categoryId: 5, status: PetStatus.pending });

    expect([...first, ...rest]).toEqual(rows.map((row, index) => ({ id: index + 1, ...row })));
    expect(Object.keys(first[0])[0]).toBe('id');
    expect(viaTypeorm.identifiers).toEqual([{ id: 4 }]);
    expect(await repository.find({ order: { id: 'ASC' } })).toStrictEqual(
      [...rows, { name: 'Tom', categoryId: 5, status: PetStatus.pending }].map((row, index) =>
        Object.assign(new PetEntity(), { id: index + 1, ...row }),
      ),
    );
    // Only the reference went through TypeORM's insert.
    expect(insert).toHaveBeenCalledTimes(1);
  });

  it('counts the ids of a multi-row insert back from the last one, also after ids were skipped', async () => {
    const repository = dataSource.getRepository(PetEntity);
    await repository.insert({ name: 'Gone', categoryId: 1, status: null });
    await repository.delete({ id: 1 });
    const created = await rowsInserter(repository)(
      Array.from({ length: 50 }, (_, index) => ({
        name: `Pet ${index}`,
        categoryId: index + 1,
        status: null,
      })),
    );
    expect(created.map((pet) => pet.id)).toEqual(Array.from({ length: 50 }, (_, index) => index + 2));
    const stored = await repository.find({ order: { id: 'ASC' } });
    expect(stored.map((pet) => [pet.id, pet.name])).toEqual(created.map((pet) => [pet.id, pet.name]));
  });

  it('leaves a row that relies on a column default to repository.insert', async () => {
    await withEntitiesDatabase({ entities: [Note] }, async (other) => {
      const repository = other.getRepository(Note);
      const insert = jest.spyOn(repository.manager, 'insert');
      const insertRows = rowsInserter(repository);
      const created = await insertRows([{ text: 'a' } as Omit<Note, 'id'>]);
      expect(insert).toHaveBeenCalledTimes(1);
      await insertRows([{ text: 'b', state: 'final' }]);
      expect(insert).toHaveBeenCalledTimes(1);
      expect(created).toEqual([{ id: 1, text: 'a', state: 'draft' }]);
      expect(await repository.find({ order: { id: 'ASC' } })).toEqual([
        { id: 1, text: 'a', state: 'draft' },
        { id: 2, text: 'b', state: 'final' },
      ]);
    });
  });

  it('fails as the database fails, with nothing stored', async () => {
    const repository = dataSource.getRepository(PetEntity);
    const bad = { name: 'Rex', categoryId: 1, status: 'lost' as PetStatus };
    await expect(
      rowsInserter(repository)([{ name: 'Ok', categoryId: 1, status: null }, bad]),
    ).rejects.toThrow(/CHECK constraint failed/);
    expect(await repository.count()).toBe(0);
  });
});
