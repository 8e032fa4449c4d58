import { Client } from 'pg';
import { Column, DataSource, Entity, ForeignKey, PrimaryGeneratedColumn } from 'typeorm';
import { dropTestSchemas, postgresTestEnv } from '../../test/support/app';
import { openEntitiesDatabase, withTempDir } from '../../test/support/entities-database';
import { describeOnPostgres } from '../../test/support/postgres';
import { AuditedChange, AuditLog } from '../common/audit-context';
import { ApiException } from '../common/errors/api-exception';
import { ChangeEvent, EventOutbox } from '../common/event-outbox';
import { ResourceStores } from './resource-store';
import { PostgresStatements } from './sql';
import { Transaction } from './transaction';
import { Transactions } from './transactions';
import { UnitOfWork } from './unit-of-work';

@Entity({ name: 'uow_spec_things' })
class Thing {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  name!: string;

  @Column({ type: 'integer' })
  version!: number;
}

@Entity({ name: 'uow_spec_notes' })
class Note {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'integer' })
  @ForeignKey(() => Thing, { onDelete: 'RESTRICT' })
  thingId!: number;
}

@Entity({ name: 'uow_spec_audit' })
class AuditRow {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  change!: string;
}

@Entity({ name: 'uow_spec_events' })
class EventRow {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  type!: string;
}

const auditLog: AuditLog = {
  entity: AuditRow,
  entry: ({ resource, resourceId, outcome }: AuditedChange) => ({
    change: `${resource} ${resourceId} ${outcome}`,
  }),
};

const outboxOf = (committed: () => void): EventOutbox => ({
  entity: EventRow,
  lockName: 'uow_spec_events',
  entry: ({ type }: ChangeEvent) => ({ type }),
  committed,
});

const refused = () => new ApiException('invalid_transition');
const request = {};

function unitOfWorkSpecs(where: string, env: () => Record<string, string>, postgres = false) {
  describe(`Transactions and the unit of work (${where})`, () => {
    let dataSource: DataSource;
    let transactions: Transactions;
    let stores: ResourceStores;
    let committedEvents: number;
    const outbox = () => outboxOf(() => committedEvents++);

    beforeEach(async () => {
      dataSource = await openEntitiesDatabase([Thing, Note, AuditRow, EventRow], env());
      committedEvents = 0;
      transactions = new Transactions(dataSource, auditLog, outbox());
      stores = new ResourceStores({ readCacheSize: 100, readCacheMegabytes: 1 });
    });

    afterEach(async () => {
      jest.restoreAllMocks();
      await dataSource.destroy();
    });

    const things = () =>
      stores.of(dataSource.getRepository(Thing), {
        mutable: true,
        events: { type: 'thing', answered: (row) => row },
      });
    const notes = () => stores.of(dataSource.getRepository(Note));
    const create = (name: string, work: UnitOfWork) => things().create({ name, version: 1 }, work);
    const names = async () =>
      (await dataSource.getRepository(Thing).find({ order: { id: 'ASC' } })).map((thing) => thing.name);
    const statuses = (results: PromiseSettledResult<unknown>[]) => results.map((result) => result.status);

    it('commits units that arrive together in one transaction, their audit and event rows in one flush', async () => {
      const insertAll = jest.spyOn(Transaction.prototype, 'insertAll');
      const send = jest.spyOn(
        PostgresStatements.prototype as unknown as { send: (text: string) => Promise<unknown> },
        'send',
      );
      const clientQuery = jest.spyOn(Client.prototype, 'query');
      const created = await Promise.all(
        ['a', 'b', 'c', 'd'].map((name) => transactions.run((work) => create(name, work), request)),
      );

      expect(created.map((thing) => thing.id)).toEqual([1, 2, 3, 4]);
      expect(
        insertAll.mock.calls.map(([tables]) => tables.map(({ target, rows }) => [target, rows.length])),
      ).toEqual([
        [
          [AuditRow, 4],
          [EventRow, 4],
        ],
      ]);
      // PostgreSQL: the rows' INSERT under its lock (BEGIN goes with it), then audit and events under theirs,
      // whatever the number of rows.
      if (postgres)
        expect(send.mock.calls.map(([text]) => text.match(/INSERT INTO "(\w+)"/g))).toEqual([
          ['INSERT INTO "uow_spec_things"'],
          ['INSERT INTO "uow_spec_audit"', 'INSERT INTO "uow_spec_events"'],
        ]);
      // BEGIN went with the first statement, not in a round trip of its own.
      const sent = clientQuery.mock.calls.map(([query]) =>
        typeof query === 'string' ? query : (query as { text?: string }).text,
      );
      if (postgres) expect(sent.filter((text) => /^(BEGIN|START)/.test(text ?? ''))).toEqual([]);
      expect(await dataSource.getRepository(AuditRow).count()).toBe(4);
      expect(committedEvents).toBe(1);
    });

    it('fails a unit refused before it wrote alone; the others commit in the same transaction', async () => {
      const insertAll = jest.spyOn(Transaction.prototype, 'insertAll');
      const results = await Promise.allSettled(
        ['a', 'b', 'c'].map((name) =>
          transactions.run(async (work) => {
            if (name === 'b') throw refused();
            return create(name, work);
          }, request),
        ),
      );

      expect(statuses(results)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await names()).toEqual(['a', 'c']);
      expect(insertAll).toHaveBeenCalledTimes(1);
    });

    it('undoes the transaction of a unit that fails after it wrote; the others run again with ids of their own', async () => {
      let tries = 0;
      const results = await Promise.allSettled(
        ['a', 'b', 'c'].map((name) =>
          transactions.run(async (work) => {
            if (name === 'a') tries++;
            const thing = await create(name, work);
            if (name === 'b') throw refused();
            return thing;
          }, request),
        ),
      );

      expect(statuses(results)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'invalid_transition' });
      expect(tries).toBe(2);
      expect(await names()).toEqual(['a', 'c']);
      expect(await dataSource.getRepository(AuditRow).count()).toBe(2);
      expect(await dataSource.getRepository(EventRow).count()).toBe(2);
    });

    it('fails alone a unit whose row breaks a foreign key; the others commit', async () => {
      const owner = await transactions.run((work) => create('owner', work));
      const results = await Promise.allSettled(
        [owner.id, 999, owner.id].map((thingId) =>
          transactions.run((work) => notes().create({ thingId }, work), request),
        ),
      );

      expect(statuses(results)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await dataSource.getRepository(Note).count()).toBe(2);
    });

    it('runs afterCommit once committed, never after a rollback, and drops changed rows either way', async () => {
      const thing = await transactions.run((work) => create('a', work));
      await things().get(thing.id);
      const done: string[] = [];

      await expect(
        transactions.run(async (work) => {
          await things().update(thing.id, { name: 'changed' }, () => undefined, work);
          work.afterCommit(() => done.push('rolled back'));
          throw new Error('the unit fails after its change');
        }),
      ).rejects.toThrow('the unit fails after its change');
      await transactions.run(async (work) => {
        await things().update(thing.id, { name: 'b' }, () => undefined, work);
        work.afterCommit(() => done.push('committed'));
      });

      expect(done).toEqual(['committed']);
      expect(await things().get(thing.id)).toEqual({ id: thing.id, name: 'b', version: 2 });
    });

    it('reads and changes the rows of units that arrive together in one statement each; a row twice, in turn', async () => {
      const [a, b, c] = await Promise.all(
        ['a', 'b', 'c'].map((name) => transactions.run((work) => create(name, work))),
      );
      stores.clearCache();
      const send = jest.spyOn(
        PostgresStatements.prototype as unknown as {
          send: (text: string, params: unknown[]) => Promise<unknown>;
        },
        'send',
      );
      const rename = (id: number, name: string) =>
        transactions.run((work) => things().update(id, { name }, () => undefined, work), request);

      const renamed = await Promise.all([
        rename(c.id, 'C'),
        rename(a.id, 'A'),
        rename(b.id, 'B'),
        rename(a.id, 'A2'),
      ]);

      expect(renamed.map((thing) => thing?.version).sort()).toEqual([2, 2, 2, 3]);
      const last = renamed[1]?.version === 3 ? 'A' : 'A2';
      expect(await names()).toEqual([last, 'B', 'C']);
      expect(await dataSource.getRepository(AuditRow).count()).toBe(4);
      if (!postgres) return;
      const sent = send.mock.calls.map(([text, params]) => ({ text, params }));
      // All four under their locks in one SELECT; the three rows in one UPDATE, in id order.
      const reads = sent.filter(({ text }) => text.endsWith('FOR UPDATE'));
      expect(reads[0].params).toEqual([[c.id, a.id, b.id, a.id]]);
      const together = sent.filter(({ text }) => text.startsWith('UPDATE') && text.includes('unnest'));
      expect(together[0].params[2]).toEqual([a.id, b.id, c.id]);
      // The second change of `a` in its own UPDATE; whichever went second ran again from a fresh read.
      expect(sent.filter(({ text }) => text.startsWith('UPDATE'))).toHaveLength(3);
      expect(reads).toHaveLength(2);
    });

    (postgres ? it : it.skip)(
      'prepares again a first statement whose parse failed: BEGIN went with it and did not count as its parse',
      async () => {
        const read = (work: UnitOfWork) => work.read('SELECT count(*) AS "n" FROM "uow_spec_later"', []);
        await expect(transactions.run(read)).rejects.toThrow(/does not exist/);
        await dataSource.query('CREATE TABLE "uow_spec_later" ("id" integer)');
        await expect(transactions.run(read)).resolves.toEqual([{ n: 0 }]);
      },
    );

    (postgres ? it : it.skip)(
      'runs again a transaction PostgreSQL ended to break a deadlock with another instance: both commit',
      async () => {
        const shared = await transactions.run((work) => create('shared', work));
        const other = new Transactions(dataSource, auditLog, outbox());
        let arrived = 0;
        let allHere!: () => void;
        const together = new Promise<void>((resolve) => (allHere = resolve));
        const meet = () => {
          if (++arrived === 2) allHere();
          return together;
        };
        const rename = (name: string, work: UnitOfWork) =>
          things().update(shared.id, { name }, () => undefined, work);

        // One locks the table's ids then wants the row, the other holds the row then wants the ids.
        const results = await Promise.allSettled([
          transactions.run(async (work) => {
            await create('a', work);
            await meet();
            return rename('a', work);
          }),
          other.run(async (work) => {
            await rename('b', work);
            await meet();
            return create('b', work);
          }),
        ]);

        expect(statuses(results)).toEqual(['fulfilled', 'fulfilled']);
        const made = await dataSource.getRepository(Thing).find({ order: { id: 'ASC' } });
        const renamed = made.slice(1).map((thing) => thing.name);
        expect(renamed.sort()).toEqual(['a', 'b']);
        expect(made[0]).toMatchObject({ id: shared.id, name: expect.stringMatching(/^[ab]$/), version: 3 });
      },
    );

    (postgres ? it : it.skip)(
      "takes each table's lock in the INSERT it guards: another instance's rows wait for it, so ids show in order",
      async () => {
        const send = jest.spyOn(
          PostgresStatements.prototype as unknown as { send: (text: string) => Promise<unknown> },
          'send',
        );
        const other = new Transactions(dataSource, auditLog, outbox());
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = transactions.run(async (work) => {
          const thing = await create('first', work);
          await held;
          return thing;
        });
        await new Promise((resolve) => setTimeout(resolve, 100));
        let secondDone = false;
        const second = other.run((work) => create('second', work)).finally(() => (secondDone = true));
        await new Promise((resolve) => setTimeout(resolve, 300));

        expect(secondDone).toBe(false);
        expect((await things().page({ limit: 10 })).items).toEqual([]);
        release();
        const [a, b] = await Promise.all([first, second]);
        expect(a.id).toBeLessThan(b.id);
        const texts = send.mock.calls.map(([text]) => text);
        expect(texts.filter((text) => text.includes('pg_advisory_xact_lock'))).toHaveLength(4);
        expect(texts.filter((text) => text.startsWith('SELECT pg_advisory_xact_lock'))).toEqual([]);
      },
    );

    it('answers a read at once while a write transaction is open; a read after a change sees it', async () => {
      const thing = await transactions.run((work) => create('a', work));
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let changed = false;
      const writing = transactions.run(async (work) => {
        await things().update(thing.id, { name: 'b' }, () => undefined, work);
        await held;
        changed = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 50));

      stores.clearCache();
      expect(await things().get(thing.id)).toEqual(thing);
      expect(changed).toBe(false);
      release();
      await writing;
      expect(await things().get(thing.id)).toMatchObject({ name: 'b', version: 2 });
    });
  });
}

withTempDir((dir) => unitOfWorkSpecs('SQLite file', () => ({ DATABASE_PATH: `${dir()}/uow.sqlite` })));
describeOnPostgres('the unit of work on PostgreSQL')('', () => {
  afterAll(dropTestSchemas);
  unitOfWorkSpecs('PostgreSQL', postgresTestEnv, true);
});
