import { Column, DataSource, Entity, ForeignKey, PrimaryGeneratedColumn } from 'typeorm';
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
const always = () => true;

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

  it('updates a row one version up, and no instance reads the old version after', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });
    expect(await owners(other).get(created.id)).toEqual({ id: created.id, name: 'Ann', version: 1 });

    const updated = await owners(one).update(
      created.id,
      { name: 'Anna', version: undefined } as never,
      always,
    );

    expect(updated).toEqual({ id: created.id, name: 'Anna', version: 2 });
    expect(await owners(other).get(created.id)).toEqual(updated);
    expect((await owners(other).page({ limit: 10 })).items).toEqual([updated]);
  });

  it('changes nothing when the condition fails (412), and answers null for a row that is not there', async () => {
    const created = await owners(one).create({ name: 'Ann', version: 1 });

    await expect(
      owners(one).update(created.id, { name: 'Bob' }, (row) => row.version === 7),
    ).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(owners(one).update(999, { name: 'Bob' }, always)).resolves.toBeNull();
    expect(await owners(one).get(created.id)).toEqual(created);
  });

  it('deletes a row once; one that rows of another table refer to is 409 still_referenced', async () => {
    const kept = await owners(one).create({ name: 'Kept', version: 1 });
    const gone = await owners(one).create({ name: 'Gone', version: 1 });
    await orders(one).create({ ownerId: kept.id });

    await expect(owners(one).delete(kept.id)).rejects.toMatchObject({ code: 'still_referenced' });
    await expect(owners(one).delete(gone.id, () => false)).rejects.toMatchObject({
      code: 'precondition_failed',
    });
    await expect(owners(one).delete(gone.id)).resolves.toBe(true);
    await expect(owners(other).get(gone.id)).resolves.toBeNull();
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

  it('is opened as mutable or not, the same way everywhere', async () => {
    owners(one);
    expect(() => one.of(dataSource.getRepository(Owner))).toThrow(/mutable and as not/);
    await expect(orders(one).delete(1)).rejects.toThrow(/not a mutable store/);
  });
});
