import { Logger } from '@nestjs/common';
import { ApiException, ErrorTranslator } from '../common/errors/api-exception';

export const OUTAGE_RETRY_AFTER_SECONDS = 2;

/** Outage errors closer together than this are one burst: one warning for all of them. */
const BURST_GAP_MS = 30_000;

const NETWORK_CODES =
  /^E(CONNREFUSED|CONNRESET|CONNABORTED|PIPE|TIMEDOUT|HOSTUNREACH|HOSTDOWN|NETUNREACH|NETDOWN|AI_AGAIN)$/;

/** PostgreSQL SQLSTATEs of a server away or refusing work: class 08, 57P01-03, 53100-53300. */
const POSTGRES_CODES = /^(08[0-9A-Z]{3}|57P0[1-3]|53[1-3]00)$/;

/** better-sqlite3 gives SQLite's extended codes (`SQLITE_IOERR_WRITE`, `SQLITE_BUSY_SNAPSHOT`). */
const SQLITE_CODES = /^SQLITE_(BUSY|FULL|READONLY|IOERR|CANTOPEN)(_[A-Z_]+)?$/;

/** node-postgres errors without a code. */
const POSTGRES_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Connection ended|terminating connection)/i;

/** TypeORM's errors for a transaction whose connection broke: the server rolls it back. */
const RELEASED_RUNNER = /^QueryRunner(Provider)?AlreadyReleasedError$/;

/** Errors of a connection that broke: the query itself may be retried on a fresh one. */
const BROKEN_CONNECTION =
  /^(ECONNRESET|EPIPE|ECONNABORTED|57P01|57P02|08006|08003|08000)$|^(Connection terminated|Client has encountered a connection error|Client was closed|terminating connection)/i;

const stringOf = (value: unknown) => (typeof value === 'string' ? value : '');

export function* layers(error: unknown): Generator<{ code: string; message: string; name: string }> {
  let current = error;
  for (let depth = 0; depth < 4 && current !== null && typeof current === 'object'; depth++) {
    const { code, message, name, driverError, cause, errors } = current as Record<string, unknown>;
    yield { code: stringOf(code), message: stringOf(message), name: stringOf(name) };
    current = driverError ?? cause ?? (Array.isArray(errors) ? (errors[0] as unknown) : undefined);
  }
}

/** Why the database is unavailable (codes and first words, never SQL), or undefined. */
export function databaseOutageCause(error: unknown): string | undefined {
  for (const { code, message, name } of layers(error)) {
    const first = message.split('\n')[0].slice(0, 160);
    if (code && (NETWORK_CODES.test(code) || POSTGRES_CODES.test(code) || SQLITE_CODES.test(code))) {
      return first.includes(code) ? first : `${code}: ${first}`;
    }
    if (POSTGRES_MESSAGES.test(first)) return first;
    if (RELEASED_RUNNER.test(name)) return `${name}: the connection was lost`;
  }
  return undefined;
}

/** PostgreSQL ended the transaction to break a deadlock, or a serialization failure: try it again. */
export const isDeadlock = (error: unknown) =>
  [...layers(error)].some(({ code }) => code === '40P01' || code === '40001');

export const isBrokenConnection = (error: unknown) =>
  [...layers(error)].some(
    ({ code, message }) => BROKEN_CONNECTION.test(code) || BROKEN_CONNECTION.test(message),
  );

export function serviceUnavailable(
  message?: string,
  retryAfterSeconds = OUTAGE_RETRY_AFTER_SECONDS,
): ApiException {
  return new ApiException('service_unavailable', message, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });
}

export function translateOutage(now: () => number = Date.now): ErrorTranslator {
  const logger = new Logger('Database');
  let lastFailure = -Infinity;
  return (error) => {
    const cause = databaseOutageCause(error);
    if (cause === undefined) return undefined;
    const at = now();
    if (at - lastFailure > BURST_GAP_MS)
      logger.warn(`database unavailable, answering 503 until it is back: ${cause}`);
    lastFailure = at;
    return serviceUnavailable();
  };
}
