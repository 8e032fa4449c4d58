import { DataSource, Repository } from 'typeorm';
import { openMigratedDatabase } from '../../test/support/database';
import { withTempDir } from '../../test/support/entities-database';
import { decodeCursor } from '../common/pagination/cursor';
import { Metrics } from '../observability/metrics';
import { PetEntity } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { Connections } from './connections';
import { ReadCache, rowBytes } from './read-cache';
import { ResourceStore, ResourceStores } from './resource-store';
import { Row } from './rows';
import { Transactions } from './transactions';

const statuses = ['available' as const, 'pending' as const, 'sold' as const, null];
const row = (index: number) => ({
  name: `Pet ${index} ✓`,
  categoryId: index % 5 === 0 ? 9007199254740991 : index,
  status: statuses[(index - 1) % statuses.length],
  version: 1,
});

/** Counts the cache's lookups, as the Prometheus metrics would. */
class CountingMetrics extends Metrics {
  readonly lookups: string[] = [];
  override readCache(kind: 'row' | 'page', hit: boolean): void {
    this.lookups.push(`${kind} ${hit ? 'hit' : 'miss'}`);
  }
}

withTempDir((dir) =>
  describe('ResourceStore (a real, migrated SQLite file, read through its own connection)', () => {
    let dataSource: DataSource;
    let repository: Repository<PetEntity>;
    let metrics: CountingMetrics;
    let store: ResourceStore<PetEntity>;
    let transactions: Transactions;

    beforeEach(async () => {
      dataSource = await openMigratedDatabase({ DATABASE_PATH: `${dir()}/pets.sqlite` });
      repository = dataSource.getRepository(PetEntity);
      await repository.insert(Array.from({ length: 23 }, (_, index) => row(index + 1)));
      metrics = new CountingMetrics();
      store = new ResourceStores({ readCacheSize: 1000, readCacheMegabytes: 1 }, metrics).of(repository);
      transactions = new Transactions(dataSource);
    });

    afterEach(async () => {
      await dataSource.destroy();
    });

    const reads = () => jest.spyOn(Connections.of(dataSource).reads, 'arrays');

    /** Every row of a list, page by page, following the next cursors. */
    async function walk(limit: number, status?: PetStatus): Promise<number[]> {
      const ids: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.page({ limit, cursor }, { status });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        ids.push(...page.items.map((pet) => pet.id));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return ids;
    }

    it('walks the whole table page by page in ascending id order, with no gap and no repeat', async () => {
      for (const limit of [1, 5, 23, 100]) {
        expect(await walk(limit)).toEqual(Array.from({ length: 23 }, (_, index) => index + 1));
      }
    });

    it('narrows a list to a filter, and gives the rows typed as stored', async () => {
      expect(await walk(2, 'sold' as const)).toEqual([3, 7, 11, 15, 19, 23]);
      const [first] = (await store.page({ limit: 1 }, { status: 'available' as const })).items;
      expect(first).toEqual({ id: 1, name: 'Pet 1 ✓', categoryId: 1, status: 'available', version: 1 });
      expect((await store.get(5))?.categoryId).toBe(9007199254740991);
    });

    it('gives a cursor that names the last row and the filter, and refuses it for another filter', async () => {
      const { nextCursor } = await store.page({ limit: 2 }, { status: 'sold' as const });
      expect(decodeCursor(nextCursor!, 'sold', 'status')).toEqual({ afterId: 7, filter: 'sold' });

      await expect(store.page({ limit: 2, cursor: nextCursor }, { status: undefined })).rejects.toMatchObject(
        {
          code: 'validation_failed',
          details: [{ field: 'cursor', message: 'cursor belongs to a list with another status filter' }],
        },
      );
      await expect(store.page({ limit: 2, cursor: 'bm90LmEuY3Vyc29y.abc' })).rejects.toMatchObject({
        code: 'validation_failed',
      });
    });

    it('answers a full page with more after it from the cache, and reads a last page every time', async () => {
      const read = reads();
      const full = await store.page({ limit: 20 });
      await expect(store.page({ limit: 20 })).resolves.toBe(full);
      const last = await store.page({ limit: 20, cursor: full.nextCursor });
      await store.page({ limit: 20, cursor: full.nextCursor });

      expect(last.nextCursor).toBeUndefined();
      expect(read).toHaveBeenCalledTimes(3);
      expect(metrics.lookups).toEqual(['page miss', 'page hit', 'page miss', 'page miss']);
    });

    it('keeps a row read by id, but not a miss: the id may be created later', async () => {
      const read = reads();
      const pet = await store.get(4);
      await expect(store.get(4)).resolves.toBe(pet);
      await expect(store.get(24)).resolves.toBeNull();
      const created = await transactions.run((work) => store.create(row(24), work));

      await expect(store.get(24)).resolves.toEqual(created);
      expect(read).toHaveBeenCalledTimes(3);
    });

    it('is one store per table, whoever asks', () => {
      const stores = new ResourceStores({ readCacheSize: 10, readCacheMegabytes: 1 });
      expect(stores.of(repository)).toBe(stores.of(dataSource.getRepository(PetEntity)));
    });
  }),
);

describe('ReadCache', () => {
  const pet = (id: number, name = `Pet ${id}`): Row => ({ id, name, categoryId: 1, status: null });

  it('holds at most its entries, the least recently used dropped first', () => {
    const cache = new ReadCache({ readCacheSize: 2, readCacheMegabytes: 1 });
    cache.entries!.set('pets/1', pet(1));
    cache.entries!.set('pets/2', pet(2));
    cache.get('row', 'pets/1');
    cache.entries!.set('pets/3', pet(3));

    expect(['pets/1', 'pets/2', 'pets/3'].map((key) => cache.get<Row>('row', key)?.id)).toEqual([
      1,
      undefined,
      3,
    ]);
  });

  it('holds at most its megabytes, as estimated', () => {
    const cache = new ReadCache({ readCacheSize: 1_000_000, readCacheMegabytes: 1 });
    for (let id = 1; id <= 10_000; id++) cache.entries!.set(`pets/${id}`, pet(id));

    expect(cache.entries!.calculatedSize).toBeLessThanOrEqual(1024 * 1024);
    expect(cache.entries!.size).toBeLessThan(10_000);
    expect(cache.get('row', 'pets/10000')).toEqual(pet(10_000));
    expect(cache.get('row', 'pets/1')).toBeUndefined();
  });

  it('counts a long name for more than a short one, and a page for its rows', () => {
    expect(rowBytes(pet(1, 'x'.repeat(255))) - rowBytes(pet(1, 'x'))).toBe(2 * 254);
    const cache = new ReadCache({ readCacheSize: 10, readCacheMegabytes: 1 });
    cache.entries!.set('pets?2', { items: [pet(1), pet(2)], nextCursor: 'c' });
    expect(cache.entries!.calculatedSize).toBeGreaterThan(rowBytes(pet(1)) + rowBytes(pet(2)));
  });

  it('keeps nothing with size 0', () => {
    const cache = new ReadCache({ readCacheSize: 0, readCacheMegabytes: 1 });
    cache.entries?.set('pets/1', pet(1));
    expect(cache.get('row', 'pets/1')).toBeUndefined();
    expect(cache.entries).toBeUndefined();
  });
});
