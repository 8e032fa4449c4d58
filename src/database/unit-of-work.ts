import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { SqliteDriver } from 'typeorm/driver/sqlite/SqliteDriver';
import { SqliteQueryRunner } from 'typeorm/driver/sqlite/SqliteQueryRunner';
import { AUDIT_LOG, AuditLog } from '../common/audit-context';
import { ChangeEvent, EVENT_OUTBOX, EventOutbox } from '../common/event-outbox';
import { Connections } from './connections';
import { GroupCommit, Settled } from './group-commit';
import { databaseOutageCause } from './outage';
import { insertRows } from './rows';
import { PgQueryable, PostgresStatements, Sql } from './sql';

/** What the units of work of one transaction gather, written in one statement each before it commits. */
class Transaction {
  readonly audit: object[] = [];
  readonly events: object[] = [];
  /** Rows changed, by table: told to other instances and dropped from this one's cache. */
  readonly changed = new Map<string, { ids: number[]; drop: (id: number) => void }>();
  readonly committed: Array<() => void> = [];
  private readonly locked = new Set<string>();

  constructor(
    readonly manager: EntityManager,
    readonly sql: Sql,
  ) {}

  /** PostgreSQL hands ids out before commit: held from the first insert to commit, a lock makes them visible in order. */
  async lock(name: string): Promise<void> {
    if (!this.sql.postgres || this.locked.has(name)) return;
    this.locked.add(name);
    await this.sql.rows('SELECT pg_advisory_xact_lock(hashtext(?))', [name]);
  }

  /** Owed whether or not it committed: a COMMIT without an answer may have committed. */
  ended(committed: boolean): void {
    for (const { ids, drop } of this.changed.values()) ids.forEach(drop);
    if (committed) for (const done of this.committed) done();
  }
}

/**
 * The changes one request makes, in a transaction that other requests' units may share (a
 * group: one commit for all). Every store method that writes takes it, and so do reads that must
 * see what it wrote. A unit that fails before it wrote anything fails alone; one that fails after
 * undoes the transaction, whose other units run again in the next (never with its ids).
 */
export class UnitOfWork {
  /** It wrote, or (PostgreSQL, where a failed statement ends the transaction) a statement of it failed. */
  wrote = false;
  private readonly at = Date.now();

  constructor(
    private readonly transaction: Transaction,
    /** The API request the changes are made for: each change is audited with it. */
    readonly request: object | undefined,
    private readonly auditLog: AuditLog | undefined,
    private readonly outbox: EventOutbox | undefined,
  ) {}

  /** The transaction's own manager, for what the stores do not do; using it counts as writing. */
  get manager(): EntityManager {
    this.wrote = true;
    return this.transaction.manager;
  }

  get publishes(): boolean {
    return this.outbox !== undefined;
  }

  read<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.transaction.sql.rows<T>(text, params).catch((error: unknown) => this.failed(error));
  }

  /** A statement that writes, with the rows it returns (`RETURNING`). */
  async write<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]> {
    const rows = await this.read<T>(text, params);
    this.wrote = true;
    return rows;
  }

  /** A statement that writes; the number of rows it changed. */
  async change(text: string, params: readonly unknown[]): Promise<number> {
    const changed = await this.transaction.sql
      .run(text, params)
      .catch((error: unknown) => this.failed(error));
    this.wrote = true;
    return changed;
  }

  inIdOrder(name: string): Promise<void> {
    return this.transaction.lock(name);
  }

  audit(resource: string, resourceId: number, outcome: number): void {
    if (this.request && this.auditLog)
      this.transaction.audit.push(
        this.auditLog.entry({ request: this.request, resource, resourceId, outcome }, this.at),
      );
  }

  publish(...events: ChangeEvent[]): void {
    if (this.outbox)
      for (const event of events) this.transaction.events.push(this.outbox.entry(event, this.at));
  }

  /** Row `id` of `table` changed: other instances are told, and `drop` runs once the transaction ends. */
  changed(table: string, id: number, drop: (id: number) => void): void {
    const rows = this.transaction.changed.get(table);
    if (rows) rows.ids.push(id);
    else this.transaction.changed.set(table, { ids: [id], drop });
  }

  /** `done` runs once the transaction has committed; never if it rolls back. */
  afterCommit(done: () => void): void {
    this.transaction.committed.push(done);
  }

  private failed(error: unknown): never {
    if (this.transaction.sql.postgres) this.wrote = true;
    throw error;
  }
}

type Work<R> = (work: UnitOfWork) => Promise<R>;

interface Member {
  work: Work<unknown>;
  request?: object;
}

/** The results of an attempt; `undone`: the unit whose failure undid the transaction (the rest run again). */
interface Attempt {
  results: Settled<unknown>[];
  undone?: number;
}

const DEADLOCK = /^(40P01|40001)$/;
const isDeadlock = (error: unknown) =>
  DEADLOCK.test(
    String(
      (error as { driverError?: { code?: unknown } }).driverError?.code ?? (error as { code?: unknown }).code,
    ),
  );

/** The one place a transaction begins: units of work that arrive together commit together. */
@Injectable()
export class Transactions {
  /** PostgreSQL: tells other instances which rows changed, in the transaction (change-notices.ts). */
  tell?: (sql: Sql, changed: ReadonlyMap<string, readonly number[]>) => Promise<unknown>;
  private readonly groups = new GroupCommit<Member, unknown>((members) => this.commit(members));

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(AUDIT_LOG) private readonly auditLog?: AuditLog,
    @Optional() @Inject(EVENT_OUTBOX) private readonly outbox?: EventOutbox,
  ) {}

  /**
   * `work` in a transaction, for an API `request` (its changes are audited); resolves once that
   * has committed. Inside `work`, pass its unit of work on; never call `run` again.
   */
  run<R>(work: Work<R>, request?: object): Promise<R> {
    return this.groups.add({ work, request }) as Promise<R>;
  }

  private async commit(members: Member[]): Promise<Settled<unknown>[]> {
    const settled: Settled<unknown>[] = [];
    let left = members.map((_, index) => index);
    for (let deadlocks = 0; left.length > 0;) {
      let attempt: Attempt;
      try {
        attempt = await this.attempt(left.map((index) => members[index]));
      } catch (error) {
        if (isDeadlock(error) && ++deadlocks < 3) continue;
        for (const index of left) settled[index] = { ok: false, error };
        break;
      }
      if (attempt.undone === undefined) {
        left.forEach((index, at) => (settled[index] = attempt.results[at]));
        break;
      }
      const undone = left[attempt.undone];
      settled[undone] = attempt.results[attempt.undone];
      left = left.filter((index) => index !== undone);
    }
    return settled;
  }

  private attempt(members: Member[]): Promise<Attempt> {
    const connections = Connections.of(this.dataSource);
    const { sqlite } = connections;
    return connections.retryUnlessCommitted((reachedCommit) =>
      sqlite
        ? sqlite.gate.exclusive(() => this.transaction(members, reachedCommit))
        : this.transaction(members, reachedCommit),
    );
  }

  private async transaction(members: Member[], reachedCommit: () => void): Promise<Attempt> {
    const { sqlite } = Connections.of(this.dataSource);
    const runner = sqlite
      ? this.sqliteRunner(sqlite.gate.inside)
      : this.dataSource.createQueryRunner('master');
    const transaction = new Transaction(
      runner.manager,
      sqlite ? sqlite.statements : new PostgresStatements((await runner.connect()) as PgQueryable),
    );
    let committed = false;
    try {
      if (sqlite) {
        // IMMEDIATE: the write lock from the start, so that a read in it is never a snapshot another process overtook.
        await runner.query('BEGIN IMMEDIATE');
        Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
      } else await runner.startTransaction();
      const results: Settled<unknown>[] = [];
      for (const [index, member] of members.entries()) {
        const unit = new UnitOfWork(transaction, member.request, this.auditLog, this.outbox);
        try {
          results.push({ ok: true, value: await member.work(unit) });
        } catch (error) {
          if (databaseOutageCause(error) !== undefined || isDeadlock(error)) throw error;
          results.push({ ok: false, error });
          if (unit.wrote) {
            await runner.rollbackTransaction();
            return { results, undone: index };
          }
        }
      }
      await this.flush(transaction);
      reachedCommit();
      await runner.commitTransaction();
      committed = true;
      return { results };
    } catch (error) {
      // SQLite: also after a failed COMMIT, so that the connection never stays inside a transaction.
      if (sqlite) await runner.query('ROLLBACK').catch(() => undefined);
      else if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    } finally {
      transaction.ended(committed);
      await runner.release();
    }
  }

  /** What the units gathered: audit events, the changed rows' notices, events last (under their lock). */
  private async flush(transaction: Transaction): Promise<void> {
    const { audit, events, changed, manager } = transaction;
    if (audit.length > 0) await insertRows(manager, this.auditLog!.entity, audit);
    if (changed.size > 0 && this.tell)
      await this.tell(transaction.sql, new Map([...changed].map(([table, { ids }]) => [table, ids])));
    if (events.length > 0) {
      await transaction.lock(this.outbox!.lockName);
      await insertRows(manager, this.outbox!.entity, events);
      transaction.committed.push(() => this.outbox!.committed());
    }
  }

  /** Its own runner over the gate's inside handle: TypeORM's one SQLite runner is what the gate holds. */
  private sqliteRunner(inside: unknown): QueryRunner {
    const runner = new SqliteQueryRunner(this.dataSource.driver as SqliteDriver);
    runner.connect = () => Promise.resolve(inside);
    return Object.assign(runner, { manager: this.dataSource.createEntityManager(runner) });
  }
}
