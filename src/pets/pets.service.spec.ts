import { DataSource } from 'typeorm';
import { openMigratedDatabase } from '../../test/support/database';
import { encodeCursor } from '../common/pagination/cursor';
import { ResourceStores } from '../database/resource-store';
import { NewPetDto } from './dto/new-pet.dto';
import { PetEntity } from './pet.entity';
import { PetStatus } from './pet-status';
import { PetsService } from './pets.service';

const newPet = (fields: Partial<NewPetDto>) => Object.assign(new NewPetDto(), fields);

/** The service on a real, migrated in-memory SQLite database. */
describe('PetsService', () => {
  let dataSource: DataSource;
  let service: PetsService;

  beforeEach(async () => {
    dataSource = await openMigratedDatabase();
    const stores = new ResourceStores({ readCacheSize: 100, readCacheMegabytes: 1 });
    service = new PetsService(dataSource.getRepository(PetEntity), stores);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it('creates an animal with a new id and no status when none is sent, and gets it back', async () => {
    const rex = await service.create(newPet({ name: 'Rex', categoryId: 7, status: PetStatus.sold }));
    const tom = await service.create(newPet({ name: 'Tom', categoryId: 3 }));

    expect(rex).toEqual({ id: 1, name: 'Rex', categoryId: 7, status: 'sold' });
    expect(tom).toEqual({ id: 2, name: 'Tom', categoryId: 3, status: null });
    await expect(service.get(2)).resolves.toEqual(tom);
  });

  it('answers 404 not_found for an id no animal has', async () => {
    await expect(service.get(42)).rejects.toMatchObject({
      code: 'not_found',
      message: 'No animal has id 42.',
    });
  });

  it('lists page by page in id order, all animals or those of one status', async () => {
    for (const status of [PetStatus.sold, undefined, PetStatus.sold, PetStatus.pending]) {
      await service.create(newPet({ name: `Pet ${status}`, categoryId: 1, status }));
    }

    const first = await service.list({ limit: 2 });
    expect(first.items.map((pet) => pet.id)).toEqual([1, 2]);
    expect(first.nextCursor).toBe(encodeCursor({ afterId: 2, filter: null }));
    await expect(service.list({ limit: 2, cursor: first.nextCursor })).resolves.toMatchObject({
      items: [{ id: 3 }, { id: 4 }],
    });

    const sold = await service.list({ limit: 1, status: PetStatus.sold });
    expect(sold.items.map((pet) => pet.id)).toEqual([1]);
    await expect(
      service.list({ limit: 1, status: PetStatus.sold, cursor: sold.nextCursor }),
    ).resolves.toEqual({
      items: [{ id: 3, name: 'Pet sold', categoryId: 1, status: 'sold' }],
    });
    await expect(service.list({ limit: 1, cursor: sold.nextCursor })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});
