import type { EventEmitter } from 'node:events';

export interface PgResult {
  rows: unknown[];
  rowCount: number | null;
}

export type PgQueryConfig = { name: string; text: string; values: unknown[]; rowMode?: 'array' };

type Connection = EventEmitter & {
  parse(statement: { text: string; name: string }): void;
  bind(portal: { portal: string; statement: string }): void;
  execute(portal: { portal: string }): void;
  parsedStatements: Record<string, string>;
};

/** What the subclass uses of node-postgres's `Query` (pg-cursor extends it too). */
interface QueryInternals {
  name: string;
  submit(connection: Connection): Error | null;
  hasBeenParsed(connection: Connection): boolean;
  prepare(connection: Connection): void;
  handleError(error: Error, connection: Connection): void;
  handleReadyForQuery(connection: Connection): void;
}

type Answer = (error: Error | null, results: PgResult | PgResult[]) => void;
type AfterBeginClass = new (config: PgQueryConfig, values: undefined, answer: Answer) => { submit: unknown };

let AfterBegin: AfterBeginClass | undefined;

/**
 * The query after an unnamed BEGIN, the two before one Sync: node-postgres sends them at once and
 * reads both answers, one round trip for both.
 */
export function afterBegin(
  client: { query(query: { submit: unknown }): unknown },
  config: PgQueryConfig,
): Promise<PgResult> {
  const Query = (AfterBegin ??= afterBeginClass());
  return new Promise((resolve, reject) => {
    const query = new Query(config, undefined, (error, results) => {
      if (error) reject(error);
      else resolve(Array.isArray(results) ? results[results.length - 1] : results);
    });
    client.query(query);
  });
}

/** Loaded only on PostgreSQL, as TypeORM loads `pg`. */
function afterBeginClass(): AfterBeginClass {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Query } = require('pg') as { Query: new (...args: unknown[]) => QueryInternals };
  return class extends Query {
    /** Where the query is parsed here: the ParseCompletes heard, BEGIN's first. */
    private parses?: { count: number; heard: () => void };

    override prepare(connection: Connection): void {
      if (!this.hasBeenParsed(connection)) {
        const parses: { count: number; heard: () => void } = { count: 0, heard: () => parses.count++ };
        this.parses = parses;
        connection.on('parseComplete', parses.heard);
      }
      connection.parse({ text: 'BEGIN', name: '' });
      connection.bind({ portal: '', statement: '' });
      connection.execute({ portal: '' });
      super.prepare(connection);
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
