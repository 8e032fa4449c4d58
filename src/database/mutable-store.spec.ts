import { Column, DataSource, Entity, ForeignKey, PrimaryGeneratedColumn } from 'typeorm';
import { openEntitiesDatabase, withTempDir } from '../../test/support/entities-database';
import { describeOnPostgres } from '../../test/support/postgres';
import { dropTestSchemas, postgresTestEnv } from '../../test/support/app';
import { ApiException } from '../common/errors/api-exception';
import { Connections } from './connections';
import { ResourceStores } from './resource-store';
import { Transactions } from './transactions';
import { UnitOfWork } from './unit-of-work';

@Entity({ name: 'mutable_spec_owners' })
export class Owner {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  name!: string;

  @Column({ type: 'bigint' })
  version!: number;
}

@Entity({ name: 'mutable_spec_orders' })
export class Order {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'integer' })
  @ForeignKey(() => Owner, { onDelete: 'RESTRICT' })
  ownerId!: number;
}

const options = { readCacheSize: 100, readCacheMegabytes: 1 };
const always = () => undefined;
const refuse = () => {
  throw new ApiException('precondition_failed');
};

/** Stores of rows that change and go, on a real database with foreign keys, as the service opens it. */
function mutableStoreSpecs(where: string, env: () => Record<string, string>) {
  describe(`a mutable ResourceStore (${where})`, () => {
    let dataSource: DataSource;
    let transactions: Transactions;
    /** Two instances of the service: each has its own stores and cache. */
    let one: ResourceStores;
    let other: ResourceStores;

    beforeEach(async () => {
      dataSource = await openEntitiesDatabase([Owner, Order], env());
      transactions = new Transactions(dataSource);
      one = new ResourceStores(options);
      other = new ResourceStores(options);
    });

    afterEach(async () => {
      await dataSource.destroy();
    });

    const owners = (stores: ResourceStores) => stores.of(dataSource.getRepository(Owner), { mutable: true });
    const orders = (stores: ResourceStores) => stores.of(dataSource.getRepository(Order));
    const run = <R>(work: (work: UnitOfWork) => Promise<R>) => transactions.run(work);
    const newOwner = (name: string) => run((work) => owners(one).create({ name, version: 1 }, work));
    const update = (id: number, name: string, check: (row: Owner) => void = always) =>
      run((work) => owners(one).update(id, { name }, check, work));
    /** Reads the row and the first page, so that both are cached. */
    const warm = async (stores: ResourceStores, id: number) => {
      await owners(stores).get(id);
      await owners(stores).page({ limit: 1 });
    };
    const reads = () => jest.spyOn(Connections.of(dataSource).reads, 'arrays');

    it('updates a row one version up; its instance answers the new version at once, from its cache after', async () => {
      const created = await newOwner('Ann');
      await newOwner('Bea');
      await warm(one, created.id);

      const updated = await update(created.id, 'Anna');

      expect(updated).toEqual({ id: created.id, name: 'Anna', version: 2 });
      expect(await owners(one).get(created.id)).toEqual(updated);
      expect((await owners(one).page({ limit: 1 })).items).toEqual([updated]);
      const read = reads();
      expect(await owners(one).get(created.id)).toEqual(updated);
      expect(read).not.toHaveBeenCalled();
    });

    it('another instance answers its cached version until it hears of the change, then the new one', async () => {
      const created = await newOwner('Ann');
      await newOwner('Bea');
      await warm(other, created.id);

      const updated = await update(created.id, 'Anna');
      expect(await owners(other).get(created.id)).toEqual(created);

      other.changed(owners(other).table, created.id);
      expect(await owners(other).get(created.id)).toEqual(updated);
      expect((await owners(other).page({ limit: 1 })).items).toEqual([updated]);
    });

    it('caches no table that changes while it may miss changes, and forgets it all when it hears again', async () => {
      const created = await newOwner('Ann');
      const read = reads();
      await owners(one).get(created.id);
      one.hearsChanges(false);
      await owners(one).get(created.id);
      await owners(one).get(created.id);
      expect(read).toHaveBeenCalledTimes(3);

      one.hearsChanges(true);
      await owners(one).get(created.id);
      await owners(one).get(created.id);
      expect(read).toHaveBeenCalledTimes(4);
    });

    it('keeps nothing a change overtook: a read of the old row that ends after the change is not cached', async () => {
      const created = await newOwner('Ann');
      const { reads: sql } = Connections.of(dataSource);
      const arrays = sql.arrays.bind(sql);
      let updated: Owner | null = null;
      jest.spyOn(sql, 'arrays').mockImplementationOnce(async (text, params) => {
        const old = await arrays(text, params);
        updated = await update(created.id, 'Anna');
        return old;
      });

      expect(await owners(one).get(created.id)).toEqual(created);
      expect(await owners(one).get(created.id)).toEqual(updated);
    });

    it('writes nothing for changes that change nothing: the version stays', async () => {
      const created = await newOwner('Ann');
      const units: UnitOfWork[] = [];
      const same = (changes: Partial<Owner>) =>
        run((work) => {
          units.push(work);
          return owners(one).update(created.id, changes, always, work);
        });

      await expect(same({ name: 'Ann' })).resolves.toEqual(created);
      await expect(same({})).resolves.toEqual(created);
      expect(units.map((unit) => unit.wrote)).toEqual([false, false]);
    });

    it('changes nothing when the check refuses, and answers null for a row that is not there', async () => {
      const created = await newOwner('Ann');

      await expect(update(created.id, 'Bob', refuse)).rejects.toMatchObject({ code: 'precondition_failed' });
      await expect(update(999, 'Bob', refuse)).resolves.toBeNull();
      expect(await owners(other).get(created.id)).toEqual(created);
    });

    it('applies racing changes of one row one after another, each with a version of its own', async () => {
      const created = await newOwner('Ann');
      await owners(one).get(created.id);

      const changed = await Promise.all(Array.from({ length: 12 }, (_, n) => update(created.id, `Ann ${n}`)));

      expect(changed.map((owner) => owner!.version).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 12 }, (_, n) => n + 2),
      );
      expect(await owners(one).get(created.id)).toMatchObject({ version: 13 });
    });

    it('checks a change against the row as it is, not as an older cache holds it', async () => {
      const created = await newOwner('Ann');
      await warm(other, created.id);
      await update(created.id, 'Anna');

      const seen: string[] = [];
      const changed = await run((work) =>
        owners(other).update(
          created.id,
          (current) => ({ name: `${current.name}!` }),
          (current) => void seen.push(current.name),
          work,
        ),
      );

      expect(changed).toEqual({ id: created.id, name: 'Anna!', version: 3 });
      expect(seen).toEqual(['Ann', 'Anna']);
    });

    it("changes a row in another store's unit of work, and drops it from the cache once that commits", async () => {
      const owner = await newOwner('Ann');
      await warm(one, owner.id);

      await run(async (work) => {
        await owners(one).update(owner.id, { name: 'Ordered' }, always, work);
        await orders(one).create({ ownerId: owner.id }, work);
        // Not committed yet: reads outside the unit answer what is committed; the unit sees its own.
        expect((await owners(one).get(owner.id))?.name).toBe('Ann');
        expect((await owners(one).get(owner.id, work))?.name).toBe('Ordered');
      });

      expect(await owners(one).get(owner.id)).toEqual({ ...owner, name: 'Ordered', version: 2 });
    });

    it('deletes a row once; one that rows of another table refer to is 409 still_referenced', async () => {
      const kept = await newOwner('Kept');
      const gone = await newOwner('Gone');
      await run((work) => orders(one).create({ ownerId: kept.id }, work));
      await warm(one, gone.id);
      const remove = (id: number, check: (row: Owner) => void = always) =>
        run((work) => owners(one).delete(id, check, work));

      await expect(remove(kept.id)).rejects.toMatchObject({ code: 'still_referenced' });
      await expect(remove(gone.id, refuse)).rejects.toMatchObject({ code: 'precondition_failed' });
      await expect(remove(gone.id)).resolves.toBe(true);
      await expect(owners(one).get(gone.id)).resolves.toBeNull();
      expect((await owners(one).page({ limit: 1 })).items).toEqual([kept]);
      await expect(remove(gone.id)).resolves.toBe(false);
      expect(await owners(one).get(kept.id)).toEqual(kept);
    });

    it('refuses a change past version 2^53 − 1 with 409, and never loops on a version it cannot hold', async () => {
      const created = await newOwner('Ann');
      const last = Number.MAX_SAFE_INTEGER;
      await dataSource.query(`UPDATE mutable_spec_owners SET version = ${last} WHERE id = ${created.id}`);

      await expect(update(created.id, 'Anna')).rejects.toMatchObject({ code: 'version_limit_reached' });
      await dataSource.query(
        `UPDATE mutable_spec_owners SET version = 9223372036854775806 WHERE id = ${created.id}`,
      );
      await expect(update(created.id, 'Anna')).rejects.toMatchObject({ code: 'version_limit_reached' });
      await dataSource.query(`UPDATE mutable_spec_owners SET version = ${last - 1} WHERE id = ${created.id}`);
      await expect(update(created.id, 'Anna')).resolves.toMatchObject({ version: last });
    });

    it('is opened as mutable or not, the same way everywhere', async () => {
      owners(one);
      expect(() => one.of(dataSource.getRepository(Owner))).toThrow(/mutable and as not/);
      await expect(run((work) => orders(one).delete(1, always, work))).rejects.toThrow(/not a mutable store/);
    });
  });
}

withTempDir((dir) => mutableStoreSpecs('SQLite file', () => ({ DATABASE_PATH: `${dir()}/store.sqlite` })));
describeOnPostgres('the mutable store on PostgreSQL')('', () => {
  afterAll(dropTestSchemas);
  mutableStoreSpecs('PostgreSQL', postgresTestEnv);
});
