import type { EventEmitter } from 'node:events';

export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
}

export type PgQueryConfig = { name: string; text: string; values: unknown[]; rowMode?: 'array' };

/** Whether a transaction's BEGIN goes before the query, its COMMIT after it. */
export interface Frame {
  begin: boolean;
  commit: boolean;
}

type Connection = EventEmitter & {
  parse(statement: { text: string; name: string }): void;
  bind(portal: { portal: string; statement: string }): void;
  execute(portal: { portal: string; rows?: number }): void;
  sync(): void;
  parsedStatements: Record<string, string>;
};

/** What the subclass uses of node-postgres's `Query` (pg-cursor extends it the same way). */
interface QueryInternals {
  name: string;
  portal: string;
  submit(connection: Connection): Error | null;
  hasBeenParsed(connection: Connection): boolean;
  prepare(connection: Connection): void;
  handleError(error: Error, connection: Connection): void;
  handleReadyForQuery(connection: Connection): void;
  _getRows(connection: Connection, rows?: number): void;
}

type Answer = (error: Error | null, results: PgResult | PgResult[]) => void;
type FramedQueryClass = new (
  config: PgQueryConfig,
  values: undefined,
  answer: Answer,
) => { submit: unknown; frame: Frame };

let FramedQuery: FramedQueryClass | undefined;

/**
 * The query with BEGIN before it and COMMIT after it as `frame` says, unnamed statements before
 * the same Sync: node-postgres sends them at once and reads every answer, one round trip for all.
 */
export function framedQuery(
  client: { query(query: { submit: unknown }): unknown },
  config: PgQueryConfig,
  frame: Frame,
): Promise<PgResult> {
  const Query = (FramedQuery ??= framedQueryClass());
  return new Promise((resolve, reject) => {
    const query = new Query(config, undefined, (error, results) => {
      if (error) reject(error);
      else resolve(Array.isArray(results) ? results[frame.begin ? 1 : 0] : results);
    });
    query.frame = frame;
    client.query(query);
  });
}

function unnamed(connection: Connection, text: string): void {
  connection.parse({ text, name: '' });
  connection.bind({ portal: '', statement: '' });
  connection.execute({ portal: '' });
}

/** Loaded only on PostgreSQL, as TypeORM loads `pg`. */
function framedQueryClass(): FramedQueryClass {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Query } = require('pg') as { Query: new (...args: unknown[]) => QueryInternals };
  return class extends Query {
    frame: Frame = { begin: false, commit: false };
    /** After BEGIN, where the query is parsed here: the ParseCompletes heard, BEGIN's first. */
    private parses?: { count: number; heard: () => void };

    override prepare(connection: Connection): void {
      if (this.frame.begin) {
        if (!this.hasBeenParsed(connection)) {
          const parses: { count: number; heard: () => void } = { count: 0, heard: () => parses.count++ };
          this.parses = parses;
          connection.on('parseComplete', parses.heard);
        }
        unnamed(connection, 'BEGIN');
      }
      super.prepare(connection);
    }

    /** Node-postgres's Execute and Sync, with COMMIT between them. */
    override _getRows(connection: Connection, rows?: number): void {
      if (!this.frame.commit || rows !== undefined) return super._getRows(connection, rows);
      connection.execute({ portal: this.portal });
      unnamed(connection, 'COMMIT');
      connection.sync();
    }

    override handleError(error: Error, connection: Connection): void {
      // The client took BEGIN's ParseComplete for the query's: one that failed to parse is not.
      if (this.parses && this.parses.count < 2) delete connection.parsedStatements[this.name];
      this.stopHearing(connection);
      super.handleError(error, connection);
    }

    override handleReadyForQuery(connection: Connection): void {
      this.stopHearing(connection);
      super.handleReadyForQuery(connection);
    }

    private stopHearing(connection: Connection): void {
      if (this.parses) connection.off('parseComplete', this.parses.heard);
      this.parses = undefined;
    }
  };
}
