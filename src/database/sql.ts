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

/** What node-sqlite3 gives: a connection's `prepare`. */
export interface Sqlite3Handle {
  prepare(text: string, done: (error: Error | null) => void): Sqlite3Statement;
}

interface Sqlite3Statement {
  all(params: unknown[], done: Done): unknown;
  run(params: unknown[], done: Done): unknown;
  finalize(done: () => void): unknown;
}

/** One text's statements: node-sqlite3 runs a statement's calls one after another, each after a turn of the event loop. */
interface Kept {
  idle: Sqlite3Statement[];
  count: number;
  waiting: Array<(statement: Sqlite3Statement) => void>;
  dropped: boolean;
}

/** Statements of one text at most: as many calls of it run at once. */
const STATEMENTS_PER_TEXT = 8;
/** Texts kept per connection; past this many the oldest goes (a module's patches vary their SET). */
const KEPT_TEXTS = 300;

/**
 * On SQLite. `all` steps a statement to its end, so none keeps a read transaction (and an old
 * snapshot) open as `get` would.
 */
export class SqliteStatements implements Sql {
  readonly postgres = false;
  private readonly kept = new Map<string, Kept>();

  constructor(private readonly handle: Sqlite3Handle) {}

  rows<T>(text: string, params: readonly unknown[]): Promise<T[]> {
    return this.send('all', text, params) as Promise<T[]>;
  }

  run(text: string, params: readonly unknown[]): Promise<number> {
    return this.send('run', text, params) as Promise<number>;
  }

  private async send(kind: 'all' | 'run', text: string, params: readonly unknown[]): Promise<unknown> {
    try {
      const kept = this.keptOf(text);
      const statement = await this.take(kept, text);
      try {
        return await new Promise((resolve, reject) => {
          statement[kind]([...params], function (this: { changes?: number }, error, rows) {
            if (error) reject(error);
            else resolve(kind === 'all' ? rows : this.changes);
          });
        });
      } finally {
        this.give(kept, statement);
      }
    } catch (error) {
      throw traced(error);
    }
  }

  private keptOf(text: string): Kept {
    let kept = this.kept.get(text);
    if (!kept) {
      this.kept.set(text, (kept = { idle: [], count: 0, waiting: [], dropped: false }));
      if (this.kept.size > KEPT_TEXTS) {
        const [oldest, old] = this.kept.entries().next().value!;
        this.kept.delete(oldest);
        old.dropped = true;
        for (const statement of old.idle.splice(0)) statement.finalize(() => undefined);
      }
    }
    return kept;
  }

  /** node-sqlite3 never answers a call on a statement whose preparation failed: that one is not kept. */
  private take(kept: Kept, text: string): Promise<Sqlite3Statement> {
    const idle = kept.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (kept.count >= STATEMENTS_PER_TEXT) return new Promise((resolve) => kept.waiting.push(resolve));
    kept.count++;
    return new Promise((resolve, reject) => {
      const statement = this.handle.prepare(text, (error) => {
        if (!error) return resolve(statement);
        kept.count--;
        reject(error);
      });
    });
  }

  private give(kept: Kept, statement: Sqlite3Statement): void {
    const next = kept.waiting.shift();
    if (next) next(statement);
    else if (kept.dropped) statement.finalize(() => undefined);
    else kept.idle.push(statement);
  }

  /** A connection closes only once its statements are finalized; calls under way finish first. */
  async finalize(): Promise<void> {
    const statements = [...this.kept.values()].flatMap((kept) => {
      kept.dropped = true;
      return kept.idle.splice(0);
    });
    this.kept.clear();
    await Promise.all(statements.map((statement) => new Promise<void>((done) => statement.finalize(done))));
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
