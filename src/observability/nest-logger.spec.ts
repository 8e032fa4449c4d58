import { Logger } from '@nestjs/common';
import pino from 'pino';
import { PinoNestLogger } from './nest-logger';

type Line = Record<string, unknown>;

function capture(level = 'trace') {
  const lines: Line[] = [];
  const root = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
  return { logger: new PinoNestLogger(root), lines };
}

describe('PinoNestLogger', () => {
  it('maps Nest levels to pino levels, the context to a field', () => {
    const { logger, lines } = capture();
    logger.log('started', 'NestApplication');
    logger.warn('careful', 'RateLimit');
    logger.debug('details', 'X');
    logger.verbose('more details', 'X');
    logger.fatal('gone', 'X');

    expect(lines.map((line) => [line.level, line.msg, line.context])).toEqual([
      [30, 'started', 'NestApplication'],
      [40, 'careful', 'RateLimit'],
      [20, 'details', 'X'],
      [10, 'more details', 'X'],
      [60, 'gone', 'X'],
    ]);
  });

  it('keeps an error stack as err.stack and the context apart', () => {
    const { logger, lines } = capture();
    logger.error('failed', 'Error: x\n    at y', 'Shutdown');
    logger.error('failed alone', 'Error: x\n    at y');
    logger.error('no stack', undefined, 'Errors');
    logger.error('just a context', 'Errors');

    expect(lines).toEqual([
      expect.objectContaining({ msg: 'failed', context: 'Shutdown', err: { stack: 'Error: x\n    at y' } }),
      expect.objectContaining({ msg: 'failed alone', err: { stack: 'Error: x\n    at y' } }),
      expect.objectContaining({ msg: 'no stack', context: 'Errors' }),
      expect.objectContaining({ msg: 'just a context', context: 'Errors' }),
    ]);
    expect(lines[2]).not.toHaveProperty('err');
    expect(lines[3]).not.toHaveProperty('err');
  });

  it('merges a fields object into the line, the next string is the message', () => {
    const { logger, lines } = capture();
    logger.error({ reqId: 'r-1', err: { stack: 'S' } }, 'Unexpected error', 'Errors');

    expect(lines).toEqual([
      expect.objectContaining({
        level: 50,
        reqId: 'r-1',
        err: { stack: 'S' },
        msg: 'Unexpected error',
        context: 'Errors',
      }),
    ]);
  });

  it('logs an Error given as the message with its message and stack', () => {
    const { logger, lines } = capture();
    logger.warn(new Error('store down'), 'RateLimit');

    expect(lines[0]).toMatchObject({
      level: 40,
      msg: 'store down',
      context: 'RateLimit',
      err: { message: 'store down' },
    });
    expect((lines[0].err as { stack: string }).stack).toMatch(/\n\s+at /);
  });

  it('writes nothing below the level', () => {
    const { logger, lines } = capture('warn');
    logger.log('quiet');
    logger.debug('quieter');
    logger.warn('loud');
    expect(lines.map((line) => line.msg)).toEqual(['loud']);
  });

  it('is what Nest Logger instances write through once the app uses it', () => {
    const { logger, lines } = capture();
    Logger.overrideLogger(logger);
    try {
      new Logger('Errors').error({ reqId: 'r-2' }, 'boom');
      new Logger('Shutdown').log('stopping');
    } finally {
      Logger.overrideLogger(true);
    }
    expect(lines).toEqual([
      expect.objectContaining({ level: 50, reqId: 'r-2', msg: 'boom', context: 'Errors' }),
      expect.objectContaining({ level: 30, msg: 'stopping', context: 'Shutdown' }),
    ]);
  });
});
