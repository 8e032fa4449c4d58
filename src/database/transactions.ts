import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { AUDIT_LOG, AuditLog } from '../common/audit-context';
import { EVENT_OUTBOX, EventOutbox } from '../common/event-outbox';
import { Connections } from './connections';
import { GroupCommit, MAX_GROUP_SIZE, MAX_GROUPS_IN_FLIGHT } from './group-commit';
import { databaseOutageCause, isDeadlock, serviceUnavailable } from './outage';
import { PgQueryable, PostgresStatements, Sql } from './sql';
import { Notice, TableRows, Transaction } from './transaction';
import { UnitOfWork } from './unit-of-work';

interface Member {
  work: (work: UnitOfWork) => Promise<unknown>;
  request?: object;
}

/**
 * The units' results; `undone`: units whose failure undid the transaction (final), the rest run
 * again; `alone`: a statement failed and no one can say whose: each unit runs again on its own.
 */
interface Attempt {
  results: PromiseSettledResult<unknown>[];
  undone?: number[];
  alone?: true;
}

/** Tries of a group PostgreSQL ended to break a deadlock (or a serialization failure) with another instance's. */
const DEADLOCK_RETRIES = 3;
/** An error that ends the attempt for every unit: the database is away, or PostgreSQL broke a deadlock. */
const endsAttempt = (error: unknown) => databaseOutageCause(error) !== undefined || isDeadlock(error);

/** The one place a transaction begins: units of work that arrive together commit together. */
@Injectable()
export class Transactions {
  /** PostgreSQL: tells other instances which rows changed, in the transaction (change-notices.ts). */
  tell?: (changed: Transaction['changed']) => Notice[];
  private readonly groups: GroupCommit<Member, unknown>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(AUDIT_LOG) private readonly auditLog?: AuditLog,
    @Optional() @Inject(EVENT_OUTBOX) private readonly outbox?: EventOutbox,
  ) {
    // PostgreSQL: one group at a time, so that this instance's groups never lock rows in each other's way.
    const inFlight = dataSource.options.type === 'postgres' ? 1 : MAX_GROUPS_IN_FLIGHT;
    this.groups = new GroupCommit((members) => this.commit(members), MAX_GROUP_SIZE, inFlight);
  }

  /**
   * `work` in a transaction, for an API `request` (its changes are audited); resolves once that
   * has committed. Inside `work`, pass its unit of work on; never call `run` again.
   */
  run<R>(work: (work: UnitOfWork) => Promise<R>, request?: object): Promise<R> {
    return this.groups.add({ work, request }) as Promise<R>;
  }

  private async commit(members: Member[]): Promise<PromiseSettledResult<unknown>[]> {
    const settled: PromiseSettledResult<unknown>[] = [];
    let left = members.map((_, index) => index);
    for (let deadlocks = 0; left.length > 0;) {
      let attempt: Attempt;
      try {
        attempt = await this.attempt(left.map((index) => members[index]));
      } catch (error) {
        const deadlock = isDeadlock(error);
        if (deadlock && ++deadlocks < DEADLOCK_RETRIES) continue;
        // Still in another instance's way: each unit alone, and a conflict that will not clear is a 503.
        if (deadlock && left.length > 1) attempt = { results: [], alone: true };
        else {
          const reason = deadlock ? serviceUnavailable() : error;
          for (const index of left) settled[index] = { status: 'rejected', reason };
          break;
        }
      }
      const { results, undone, alone } = attempt;
      if (alone) {
        for (const index of left) settled[index] = (await this.commit([members[index]]))[0];
        break;
      }
      if (undone === undefined) {
        left.forEach((index, at) => (settled[index] = results[at]));
        break;
      }
      for (const at of undone) settled[left[at]] = results[at];
      left = left.filter((_, at) => !undone.includes(at));
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
    const connections = Connections.of(this.dataSource);
    const { sqlite } = connections;
    const runner = sqlite ? sqlite.runner : this.dataSource.createQueryRunner('master');
    const sql = sqlite
      ? sqlite.statements
      : new PostgresStatements((await runner.connect()) as PgQueryable, connections.failed, true);
    const transaction = new Transaction(runner.manager, sql, (target) => connections.shape(target));
    const units = members.map(
      ({ request }) => new UnitOfWork(transaction, request, this.auditLog, this.outbox),
    );
    let committed = false;
    try {
      // IMMEDIATE: the write lock from the start, so that a read in it is never a snapshot another process overtook.
      if (sqlite) await sql.run('BEGIN IMMEDIATE', []);
      // PostgreSQL's BEGIN goes with the first statement; TypeORM's queries in it must not begin another.
      Object.assign(runner, { isTransactionActive: true, transactionDepth: 1 });
      const attempt = sqlite ? await inTurn(members, units) : await together(members, units, transaction);
      if (attempt.undone || attempt.alone) {
        await end(sql, runner, 'ROLLBACK');
        return attempt;
      }
      await this.flush(transaction);
      reachedCommit();
      await end(sql, runner, 'COMMIT');
      committed = true;
      return attempt;
    } catch (error) {
      // SQLite: also after a failed COMMIT, so that the connection never stays inside a transaction.
      await end(sql, runner, 'ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      transaction.ended(committed);
      // SQLite's runner serves every transaction in turn; releasing it would end it.
      if (!sqlite) await runner.release();
    }
  }

  /** What the units gathered: audit and event rows (under the outbox's lock), the changed rows' notices. */
  private async flush(transaction: Transaction): Promise<void> {
    const { audit, events, changed } = transaction;
    const notices = changed.size > 0 && this.tell ? this.tell(changed) : [];
    const tables: TableRows[] = [];
    if (audit.length > 0) tables.push({ target: this.auditLog!.entity, rows: audit });
    if (events.length > 0) {
      tables.push({ target: this.outbox!.entity, rows: events, lock: this.outbox!.lockName });
      transaction.committed.push(() => this.outbox!.committed());
    }
    if (tables.length > 0 || notices.length > 0) await transaction.insertAll(tables, notices);
  }
}

/** Where it began: PostgreSQL's begins with its first statement, and one that sent none has none. */
function end(sql: Sql, runner: QueryRunner, how: 'COMMIT' | 'ROLLBACK'): Promise<unknown> {
  if (!(sql instanceof PostgresStatements)) return sql.run(how, []);
  if (!sql.begun) return Promise.resolve();
  return how === 'COMMIT' ? runner.commitTransaction() : runner.rollbackTransaction();
}

/**
 * PostgreSQL: the units run at once, so that the rows they insert go in one statement (each is a
 * round trip). A failed statement ends the transaction for all of them.
 */
async function together(members: Member[], units: UnitOfWork[], transaction: Transaction): Promise<Attempt> {
  const results = await Promise.allSettled(members.map(({ work }, index) => work(units[index])));
  const ended = results.find((result) => result.status === 'rejected' && endsAttempt(result.reason));
  if (ended) throw (ended as PromiseRejectedResult).reason;
  if (transaction.failed && members.length > 1) return { results, alone: true };
  const undone = results.flatMap((result, index) =>
    result.status === 'rejected' && units[index].wrote ? [index] : [],
  );
  return undone.length > 0 ? { results, undone } : { results };
}

/** SQLite: one unit after another (each statement runs at once), up to one that fails after writing. */
async function inTurn(members: Member[], units: UnitOfWork[]): Promise<Attempt> {
  const results: PromiseSettledResult<unknown>[] = [];
  for (const [index, { work }] of members.entries()) {
    try {
      results.push({ status: 'fulfilled', value: await work(units[index]) });
    } catch (reason) {
      if (endsAttempt(reason)) throw reason;
      results.push({ status: 'rejected', reason });
      if (units[index].wrote) return { results, undone: [index] };
    }
  }
  return { results };
}
