import { Logger } from '@nestjs/common';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { databaseOutageCause, isBrokenConnection, serviceUnavailable, translateOutage } from './outage';
import { repeatable } from './outage-wait';

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** How TypeORM hands a driver error over: a QueryFailedError that keeps it as driverError. */
function queryFailed(driverError: Error): QueryFailedError {
  return new QueryFailedError('SELECT secret FROM pets WHERE id = $1', [1], driverError);
}

describe('databaseOutageCause', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['admin shutdown', queryFailed(withCode('terminating connection due to administrator command', '57P01'))],
    ['starting up', withCode('the database system is starting up', '57P03')],
    ['shutting down', withCode('the database system is shutting down', '57P03')],
    ['connection failure', withCode('connection failure', '08006')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['disk full (PostgreSQL)', withCode('could not extend file', '53100')],
    ['a broken client', new Error('Connection terminated unexpectedly')],
    ['pool acquisition timeout', new Error('timeout exceeded when trying to connect')],
    ['connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a transaction whose connection was dropped', new QueryRunnerProviderAlreadyReleasedError()],
    ['a commit after the connection was dropped', new QueryRunnerAlreadyReleasedError()],
    ['SQLite busy', queryFailed(withCode('SQLITE_BUSY: database is locked', 'SQLITE_BUSY'))],
    ['SQLite disk full', queryFailed(withCode('SQLITE_FULL: database or disk is full', 'SQLITE_FULL'))],
    [
      'SQLite read-only',
      withCode('SQLITE_READONLY: attempt to write a readonly database', 'SQLITE_READONLY'),
    ],
    ['SQLite I/O error', withCode('SQLITE_IOERR: disk I/O error', 'SQLITE_IOERR')],
    ['SQLite cannot open', withCode('SQLITE_CANTOPEN: unable to open database file', 'SQLITE_CANTOPEN')],
  ])('recognises %s', (_label, error) => {
    const cause = databaseOutageCause(error);
    expect(cause).toBeDefined();
    expect(cause).not.toContain('SELECT');
  });

  it.each([
    ['a missing table', queryFailed(withCode('SQLITE_ERROR: no such table: pets', 'SQLITE_ERROR'))],
    ['a unique violation', queryFailed(withCode('duplicate key value violates unique constraint', '23505'))],
    ['a syntax error', withCode('syntax error at or near "SELEC"', '42601')],
    ['a statement timeout', withCode('canceling statement due to statement timeout', '57014')],
    ['a corrupt SQLite file', withCode('SQLITE_CORRUPT: database disk image is malformed', 'SQLITE_CORRUPT')],
    ['a programming error', new TypeError('cannot read properties of undefined')],
    ['a string', 'ECONNREFUSED'],
    ['undefined', undefined],
  ])('leaves %s alone (an unexpected error)', (_label, error) => {
    expect(databaseOutageCause(error)).toBeUndefined();
  });

  it('names the code and the first line of the message', () => {
    expect(databaseOutageCause(withCode('the database system is starting up\ndetail', '57P03'))).toBe(
      '57P03: the database system is starting up',
    );
    expect(databaseOutageCause(withCode('SQLITE_FULL: database or disk is full', 'SQLITE_FULL'))).toBe(
      'SQLITE_FULL: database or disk is full',
    );
  });
});

describe('isBrokenConnection', () => {
  it.each([
    queryFailed(withCode('terminating connection due to administrator command', '57P01')),
    new Error('Connection terminated unexpectedly'),
    withCode('read ECONNRESET', 'ECONNRESET'),
  ])('is true for a connection that broke under a query (%s)', (error) => {
    expect(isBrokenConnection(error)).toBe(true);
  });

  it.each([
    withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    withCode('the database system is starting up', '57P03'),
    withCode('SQLITE_BUSY: database is locked', 'SQLITE_BUSY'),
    new Error('no such table'),
  ])('is false where a new connection would fail the same way (%s)', (error) => {
    expect(isBrokenConnection(error)).toBe(false);
  });
});

describe('repeatable, without an outage wait (SQLite)', () => {
  const readWithRetry = <T>(read: () => Promise<T>) => repeatable(undefined, read);

  it('reads once more after a broken connection', async () => {
    const read = jest
      .fn<Promise<string>, []>()
      .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'))
      .mockResolvedValueOnce('rows');
    await expect(readWithRetry(read)).resolves.toBe('rows');
    expect(read).toHaveBeenCalledTimes(2);
  });

  it('reads only twice, and does not retry other errors', async () => {
    const broken = jest.fn(() => Promise.reject(new Error('Connection terminated unexpectedly')));
    await expect(readWithRetry(broken)).rejects.toThrow('Connection terminated');
    expect(broken).toHaveBeenCalledTimes(2);

    const refused = jest.fn(() => Promise.reject(withCode('connect ECONNREFUSED', 'ECONNREFUSED')));
    await expect(readWithRetry(refused)).rejects.toThrow('ECONNREFUSED');
    expect(refused).toHaveBeenCalledTimes(1);
  });
});

describe('serviceUnavailable', () => {
  it('is a 503 with Retry-After', () => {
    const error = serviceUnavailable();
    expect(error.getStatus()).toBe(503);
    expect(error.code).toBe('service_unavailable');
    expect(error.headers).toEqual({ 'Retry-After': '2' });
    expect(error.message).toMatch(/temporarily unavailable/);
  });
});

describe('translateOutage', () => {
  it('answers an outage 503, and warns once per burst of them', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    let now = 1_000_000;
    const translate = translateOutage(() => now);

    expect(translate(new Error('syntax error'))).toBeUndefined();
    expect(translate(withCode('ECONNREFUSED: connect ECONNREFUSED', 'ECONNREFUSED'))).toEqual(
      serviceUnavailable(),
    );
    for (let i = 0; i < 50; i++) {
      now += 500;
      translate(withCode('the database system is starting up', '57P03'));
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      'database unavailable, answering 503 until it is back: ECONNREFUSED: connect ECONNREFUSED',
    );

    now += 60_000;
    translate(withCode('SQLITE_FULL: database or disk is full', 'SQLITE_FULL'));
    expect(warn).toHaveBeenCalledTimes(2);
    warn.mockRestore();
  });
});
