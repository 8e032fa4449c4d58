import { createHash } from 'node:crypto';
import { isNativeError } from 'node:util/types';

/** Statements by their text, prepared once per connection, with `?` parameters on either database. */
export interface Sql {
  readonly postgres: boolean;
  rows<T = Record<string, unknown>>(text: string, params: readonly unknown[]): Promise<T[]>;
  /** The number of rows the statement changed. */
  run(text: string, params: readonly unknown[]): Promise<number>;
}

type Done = (error: Error | null, rows?: unknown) => void;

/** What node-sqlite3 gives: a connection's `prepare`, or (no statements kept) its `all` and `run`. */
export interface Sqlite3Handle {
  prepare(text: string, done: (error: Error | null) => void): Sqlite3Statement;
  all(text: string, params: unknown[], done: Done): unknown;
  run(text: string, params: unknown[], done: Done): unknown;
}

interface Sqlite3Statement {
  all(params: unknown[], done: Done): unknown;
  run(params: unknown[], done: Done): unknown;
  finalize(done: () => void): unknown;
}

/** Kept per connection; past this many texts the oldest is finalized (a module's patches vary their SET). */
const KEPT_STATEMENTS = 500;

/**
 * On SQLite. `all` steps a statement to its end, so none keeps a read transaction (and an old
 * snapshot) open as `get` would. `prepared: false` sends each text through the connection's own
 * `all`/`run`, which an in-memory database's gate can hold back.
 */
export class SqliteStatements implements Sql {
  readonly postgres = false;
  private readonly kept = new Map<string, Promise<Sqlite3Statement>>();

  constructor(
    private readonly handle: Sqlite3Handle,
    private readonly prepared = true,
  ) {}

  rows<T>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.send('all', text, params) as Promise<T[]>;
  }

  run(text: string, params: readonly unknown[]): Promise<number> {
    return this.send('run', text, params) as Promise<number>;
  }

  private async send(kind: 'all' | 'run', text: string, params: readonly unknown[]): Promise<unknown> {
    try {
      const statement = this.prepared ? await this.statement(text) : undefined;
      return await new Promise((resolve, reject) => {
        const done = function (this: { changes?: number }, error: Error | null, rows?: unknown) {
          if (error) reject(error);
          else resolve(kind === 'all' ? rows : this.changes);
        };
        if (statement) statement[kind]([...params], done);
        else this.handle[kind](text, [...params], done);
      });
    } catch (error) {
      throw traced(error);
    }
  }

  /** node-sqlite3 never answers a call on a statement whose preparation failed: that one is not kept. */
  private statement(text: string): Promise<Sqlite3Statement> {
    let statement = this.kept.get(text);
    if (statement) return statement;
    statement = new Promise((resolve, reject) => {
      const prepared = this.handle.prepare(text, (error) => (error ? reject(error) : resolve(prepared)));
    });
    statement.catch(() => this.kept.delete(text));
    this.kept.set(text, statement);
    if (this.kept.size > KEPT_STATEMENTS) {
      const [oldest, old] = this.kept.entries().next().value!;
      this.kept.delete(oldest);
      void finalize(old);
    }
    return statement;
  }

  /** A connection closes only once its statements are finalized. */
  async finalize(): Promise<void> {
    const statements = [...this.kept.values()];
    this.kept.clear();
    await Promise.all(statements.map(finalize));
  }
}

/**
 * A driver's error carries no stack of ours (SQLite's none at all): taken here, after an await, it
 * holds the async callers that led to the statement, at no cost to statements that succeed.
 */
function traced(error: unknown): unknown {
  if (isNativeError(error)) Error.captureStackTrace(error, traced);
  return error;
}

const finalize = (statement: Promise<Sqlite3Statement>) =>
  statement.then(
    (prepared) => new Promise<void>((done) => prepared.finalize(done)),
    () => undefined,
  );

export interface PgQueryable {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{
    rows: unknown[];
    rowCount: number | null;
  }>;
}

const pgTexts = new Map<string, { name: string; text: string }>();

/** `?` become `$1`, `$2`...; the name makes node-postgres prepare it once per connection. */
function pgText(text: string): { name: string; text: string } {
  let known = pgTexts.get(text);
  if (!known) {
    let n = 0;
    known = {
      name: `petstore_${createHash('sha1').update(text).digest('base64url').slice(0, 16)}`,
      text: text.replace(/\?/g, () => `$${++n}`),
    };
    pgTexts.set(text, known);
  }
  return known;
}

/** On PostgreSQL: a pool (each of its connections prepares a text at its first use) or one client. */
export class PostgresStatements implements Sql {
  readonly postgres = true;

  constructor(private readonly client: PgQueryable) {}

  async rows<T>(text: string, params: readonly unknown[]): Promise<T[]> {
    return (await this.send(text, params)).rows as T[];
  }

  async run(text: string, params: readonly unknown[]): Promise<number> {
    return (await this.send(text, params)).rowCount ?? 0;
  }

  private async send(text: string, params: readonly unknown[]) {
    try {
      return await this.client.query({ ...pgText(text), values: [...params] });
    } catch (error) {
      throw traced(error);
    }
  }
}
