import { DataSource } from 'typeorm';
import { openMigratedDatabase } from '../../test/support/database';
import { ApiException } from '../common/errors/api-exception';
import { encodeCursor } from '../common/pagination/cursor';
import { ResourceStores } from '../database/resource-store';
import { __Item__Entity } from './__item-kebab__.entity';
import { __Items__Service } from './__items-kebab__.service';

/** The service on a real, migrated in-memory SQLite database. */
describe('__Items__Service', () => {
  let dataSource: DataSource;
  let service: __Items__Service;

  beforeEach(async () => {
    dataSource = await openMigratedDatabase();
    const stores = new ResourceStores({ readCacheSize: 100, readCacheMegabytes: 1 });
    service = new __Items__Service(dataSource.getRepository(__Item__Entity), stores);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  it('creates __a_noun__ with a new id, and gets it back', async () => {
    const first = await service.create({ name: 'First', description: 'The first one' });
    const second = await service.create({ name: 'Second' });

    expect(first).toEqual({ id: 1, name: 'First', description: 'The first one' });
    expect(second).toEqual({ id: 2, name: 'Second', description: null });
    await expect(service.get(2)).resolves.toEqual(second);
  });

  it('answers 404 not_found for an id no __noun__ has', async () => {
    await expect(service.get(42)).rejects.toMatchObject({ code: 'not_found', message: 'No __noun__ has id 42.' });
  });

  it('lists page by page in id order, with a cursor while more follow', async () => {
    for (const name of ['a', 'b', 'c']) await service.create({ name });

    const first = await service.list({ limit: 2 });
    expect(first.items.map((__item__) => __item__.name)).toEqual(['a', 'b']);
    expect(first.nextCursor).toBe(encodeCursor({ afterId: 2, filter: null }));

    const last = await service.list({ limit: 2, cursor: first.nextCursor });
    expect(last).toEqual({ items: [{ id: 3, name: 'c', description: null }] });
  });

  it('refuses a cursor that is not one of this list', async () => {
    const foreign = encodeCursor({ afterId: 1, filter: 'sold' });
    await expect(service.list({ limit: 2, cursor: foreign })).rejects.toBeInstanceOf(ApiException);
    await expect(service.list({ limit: 2, cursor: 'bm90LmEuY3Vyc29y.abc' })).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});
