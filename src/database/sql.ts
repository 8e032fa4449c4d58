import { createHash } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { afterBegin, PgQueryConfig, PgResult } from './after-begin';

type Mode = 'rows' | 'arrays' | 'run';

/** Statements by their text, prepared once per connection, with `?` parameters on either database. */
export abstract class Sql {
  abstract readonly postgres: boolean;

  rows<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.send(text, params, 'rows') as Promise<T[]>;
  }

  /** Rows as arrays of their columns' values, in the order selected: no object per row. */
  arrays(text: string, params: readonly unknown[]): Promise<unknown[][]> {
    return this.send(text, params, 'arrays') as Promise<unknown[][]>;
  }

  /** The number of rows the statement changed. */
  run(text: string, params: readonly unknown[]): Promise<number> {
    return this.send(text, params, 'run') as Promise<number>;
  }

  /** A transaction's statements: it begins now, before a driver's own queries on its connection. */
  begin(): void {}

  protected abstract send(text: string, params: readonly unknown[], mode: Mode): Promise<unknown>;
}

/** Texts kept per connection; past this many the oldest goes (a module's patches vary their SET). */
const KEPT_TEXTS = 500;

/** Told of each statement that fails (TypeORM's logger, which the metrics count from). */
export type OnFailure = (error: unknown, text: string) => void;

/** On SQLite (better-sqlite3): each statement runs at once, on the event loop, in microseconds. */
export class SqliteStatements extends Sql {
  readonly postgres = false;
  private readonly kept = new Map<string, Statement<unknown[], unknown>>();

  constructor(
    private readonly database: Database,
    private readonly failed: OnFailure,
  ) {
    super();
  }

  protected send(text: string, params: readonly unknown[], mode: Mode): Promise<unknown> {
    try {
      let statement = this.kept.get(text);
      if (!statement) {
        this.kept.set(text, (statement = this.database.prepare(text)));
        if (this.kept.size > KEPT_TEXTS) this.kept.delete(this.kept.keys().next().value!);
      }
      if (mode === 'run' && !statement.reader) return Promise.resolve(statement.run(...params).changes);
      const rows = statement.raw(mode === 'arrays').all(...params);
      return Promise.resolve(mode === 'run' ? rows.length : rows);
    } catch (error) {
      this.failed(error, text);
      return Promise.reject(traced(error));
    }
  }
}

/**
 * A driver's error carries no stack of ours (node-postgres's comes from its parser): taken here, it
 * holds the callers that led to the statement, async ones included, at no cost to statements that succeed.
 */
function traced(error: unknown): Error {
  // better-sqlite3's SqliteError has Error's prototype without being one V8 made.
  if (typeof error !== 'object' || error === null) return new Error(String(error));
  Error.captureStackTrace(error, traced);
  return error as Error;
}

export interface PgQueryable {
  query(config: PgQueryConfig): Promise<PgResult>;
  /** node-postgres runs an object with `submit` (a `Query`) as it is, answering through its callback. */
  query(query: { submit: unknown }): unknown;
}

const pgTexts = new Map<string, { name: string; text: string }>();

/** On PostgreSQL: a pool (each of its connections prepares a text at its first use) or one client. */
export class PostgresStatements extends Sql {
  readonly postgres = true;
  /** One client's statements, in the order sent, one at a time: node-postgres 9 will stop queueing them. */
  private turn?: Promise<unknown>;
  /** A transaction's: `BEGIN` goes with its first statement, not in a round trip of its own. */
  private beginsWithNext: boolean;

  constructor(
    private readonly client: PgQueryable,
    private readonly failed: OnFailure,
    transaction = false,
  ) {
    super();
    if (transaction) this.turn = Promise.resolve();
    this.beginsWithNext = transaction;
  }

  /** Whether the transaction has begun: a statement of it went to the database. */
  get begun(): boolean {
    return this.turn !== undefined && !this.beginsWithNext;
  }

  /** The transaction begins now, ahead of what the client is sent next (a driver's own queries). */
  override begin(): void {
    if (!this.beginsWithNext) return;
    this.beginsWithNext = false;
    void this.client
      .query({ name: '', text: 'BEGIN', values: [] })
      .catch((error: unknown) => this.failed(error, 'BEGIN'));
  }

  protected send(text: string, params: readonly unknown[], mode: Mode): Promise<unknown> {
    if (this.turn === undefined) return this.query(text, params, mode);
    const sent = this.turn.then(() => this.query(text, params, mode));
    this.turn = sent.catch(() => undefined);
    return sent;
  }

  private async query(text: string, params: readonly unknown[], mode: Mode): Promise<unknown> {
    try {
      let known = pgTexts.get(text);
      if (!known) {
        // `?` become `$1`, `$2`...; the name makes node-postgres prepare it once per connection.
        let n = 0;
        known = {
          name: `petstore_${createHash('sha1').update(text).digest('base64url').slice(0, 16)}`,
          text: text.replace(/\?/g, () => `$${++n}`),
        };
        pgTexts.set(text, known);
      }
      const config: PgQueryConfig = {
        ...known,
        values: [...params],
        ...(mode === 'arrays' ? { rowMode: 'array' as const } : {}),
      };
      const begin = this.beginsWithNext;
      this.beginsWithNext = false;
      const { rows, rowCount } = begin
        ? await afterBegin(this.client, config)
        : await this.client.query(config);
      return mode === 'run' ? (rowCount ?? 0) : rows;
    } catch (error) {
      this.failed(error, text);
      throw traced(error);
    }
  }
}
