import { Column, DataSource, Entity, EntityManager, ForeignKey, PrimaryGeneratedColumn } from 'typeorm';
import { ApiException } from '../common/errors/api-exception';
import { ResourceStores } from './resource-store';
import { installSqliteGate } from './sqlite-gate';

@Entity({ name: 'mutable_spec_owners' })
class Owner {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  name!: string;

  @Column({ type: 'integer' })
  version!: number;
}

@Entity({ name: 'mutable_spec_orders' })
class Order {
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

/** Stores of rows that change and go, on a real in-memory SQLite database with foreign keys on. */
describe('a mutable ResourceStore', () => {
  let dataSource: DataSource;
  /** Two instances of the service: each has its own stores and cache. */
  let one: ResourceStores;
  let other: ResourceStores;

  beforeEach(async () => {
    dataSource = await new DataSource({
      type: 'sqlite',
      database: ':memory:',
      entities: [Owner, Order],
      synchronize: true,
    }).initialize();
    installSqliteGate(dataSource);
    one = new ResourceStores(options);
    other = new ResourceStores(options);
  });

  afterEach(async () => {
    await dataSource.destroy();
  });

  const owners = (stores: ResourceStores) => stores.of(dataSource.getRepository(Owner), { mutable: true });
  const orders = (stores: ResourceStores) => stores.of(dataSource.getRepository(Order));
  /** Reads the row and the first page, so that both are cached. */
  const warm = async (stores: ResourceStores, id: number) => {
    await owners(stores).get(id);
    await owners(stores).page({ limit: 1 });
  };

  it('updates a row one version up; its instance answers the new version at once, from its cache after', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    await owners(one).create({ name: 'Bea', version: 1 });
    await warm(one, created.id);

    const updated = await owners(one).update(created.id, { name: 'Anna' }, always);

    expect(updated).toEqual({ id: created.id, name: 'Anna', version: 2 });
    expect(await owners(one).get(created.id)).toEqual(updated);
    expect((await owners(one).page({ limit: 1 })).items).toEqual([updated]);
    const read = jest.spyOn(dataSource.getRepository(Owner), 'findOneBy');
    expect(await owners(one).get(created.id)).toEqual(updated);
    expect(read).not.toHaveBeenCalled();
  });

  it('another instance answers its cached version until it hears of the change, then the new one', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    await owners(one).create({ name: 'Bea', version: 1 });
    await warm(other, created.id);

    const updated = await owners(one).update(created.id, { name: 'Anna' }, always);
    expect(await owners(other).get(created.id)).toEqual(created);

    other.changed(owners(other).table, created.id);
    expect(await owners(other).get(created.id)).toEqual(updated);
    expect((await owners(other).page({ limit: 1 })).items).toEqual([updated]);
  });

  it('caches no table that changes while it may miss changes, and forgets it all when it hears again', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    const read = jest.spyOn(dataSource.getRepository(Owner), 'findOneBy');
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
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    const repository = dataSource.getRepository(Owner);
    const findOneBy = repository.findOneBy.bind(repository);
    let updated: Owner | null = null;
    jest.spyOn(repository, 'findOneBy').mockImplementationOnce(async (where) => {
      const old = await findOneBy(where);
      updated = await owners(one).update(created.id, { name: 'Anna' }, always);
      return old;
    });

    expect(await owners(one).get(created.id)).toEqual(created);
    expect(await owners(one).get(created.id)).toEqual(updated);
  });

  it('writes nothing for changes that change nothing: the version stays', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    const update = jest.spyOn(EntityManager.prototype, 'update');

    await expect(owners(one).update(created.id, { name: 'Ann' }, always)).resolves.toEqual(created);
    await expect(owners(one).update(created.id, {}, always)).resolves.toEqual(created);
    expect(update).not.toHaveBeenCalled();
    update.mockRestore();
  });

  it('changes nothing when the check refuses, and answers null for a row that is not there', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });

    await expect(owners(one).update(created.id, { name: 'Bob' }, refuse)).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(owners(one).update(999, { name: 'Bob' }, refuse)).resolves.toBeNull();
    expect(await owners(other).get(created.id)).toEqual(created);
  });

  it("changes a row in another store's transaction, and drops it from the cache once that commits", async () => {
    const owner = await owners(one).create({ name: 'Ann', version: 1 });
    await warm(one, owner.id);

    await orders(one).create({ ownerId: owner.id }, async (transaction) => {
      await owners(one).update(owner.id, { name: 'Ordered' }, always, { transaction });
      // Not committed yet: this instance still answers what is committed.
      expect((await owners(one).get(owner.id))?.name).toBe('Ann');
    });

    expect(await owners(one).get(owner.id)).toEqual({ ...owner, name: 'Ordered', version: 2 });
  });

  it('refuses a change in a transaction no store began: it could not be dropped from the cache on commit', async () => {
    const owner = await owners(one).create({ name: 'Ann', version: 1 });
    await expect(
      dataSource.transaction((manager) =>
        owners(one).update(owner.id, { name: 'Lost' }, always, { transaction: manager }),
      ),
    ).rejects.toThrow('a change in a transaction that no ResourceStore began');
    expect(await owners(other).get(owner.id)).toEqual(owner);
  });

  it('deletes a row once; one that rows of another table refer to is 409 still_referenced', async () => {
    const kept = await owners(one).create({ name: 'Kept', version: 1 });
    const gone = await owners(one).create({ name: 'Gone', version: 1 });
    await orders(one).create({ ownerId: kept.id });
    await warm(one, gone.id);

    await expect(owners(one).delete(kept.id)).rejects.toMatchObject({ code: 'still_referenced' });
    await expect(owners(one).delete(gone.id, refuse)).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(owners(one).delete(gone.id)).resolves.toBe(true);
    await expect(owners(one).get(gone.id)).resolves.toBeNull();
    expect((await owners(one).page({ limit: 1 })).items).toEqual([kept]);
    await expect(owners(one).delete(gone.id)).resolves.toBe(false);
    expect(await owners(one).get(kept.id)).toEqual(kept);
  });

  it('creates the rows of a group whose foreign keys hold when one of it breaks its own', async () => {
    const owner = await owners(one).create({ name: 'Ann', version: 1 });

    const results = await Promise.allSettled(
      [1, 2, 3].map((n) => orders(one).create({ ownerId: n === 2 ? 999 : owner.id })),
    );

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await dataSource.getRepository(Order).count()).toBe(2);
  });

  it("creates the rows of a group whose own work holds when one row's work refuses it", async () => {
    const owner = await owners(one).create({ name: 'Ann', version: 1 });

    const results = await Promise.allSettled(
      [1, 2, 3].map((n) =>
        orders(one).create({ ownerId: owner.id }, () =>
          n === 2 ? Promise.reject(new ApiException('invalid_transition')) : Promise.resolve(),
        ),
      ),
    );

    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(await dataSource.getRepository(Order).count()).toBe(2);
  });

  it('is opened as mutable or not, the same way everywhere', async () => {
    owners(one);
    expect(() => one.of(dataSource.getRepository(Owner))).toThrow(/mutable and as not/);
    await expect(orders(one).delete(1)).rejects.toThrow(/not a mutable store/);
  });
});
