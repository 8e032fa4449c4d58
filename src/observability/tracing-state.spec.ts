import pino from 'pino';
import { PinoNestLogger } from './nest-logger';
import {
  activeTraceIds,
  registerTracing,
  serverSpanIdsOf,
  SERVER_SPAN_IDS,
  shutdownTracing,
  tracingDescription,
} from './tracing-state';

const IDS = { trace_id: '0af7651916cd43dd8448eb211c80319c', span_id: 'b7ad6b7169203331' };

function capture() {
  const lines: Record<string, unknown>[] = [];
  const root = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger: new PinoNestLogger(root), lines };
}

describe('tracing state', () => {
  afterEach(() => shutdownTracing());

  it('is empty while tracing is off: no ids, and log lines without trace fields', () => {
    expect(tracingDescription()).toBeUndefined();
    expect(activeTraceIds()).toBeUndefined();
    expect(serverSpanIdsOf({})).toBeUndefined();
    const { logger, lines } = capture();
    logger.error({ reqId: 'r1' }, 'Unexpected error');
    expect(lines[0]).not.toHaveProperty('trace_id');
  });

  it('gives the active span to every Nest log line while tracing is on, errors included', () => {
    const shutdown = jest.fn(() => Promise.resolve());
    registerTracing({ activeIds: () => IDS, shutdown, description: 'test' });
    const { logger, lines } = capture();
    logger.error('Unexpected error', 'Error: x\n    at y', 'Errors');
    logger.warn('careful', 'Idempotency');
    expect(lines).toEqual([
      expect.objectContaining({
        ...IDS,
        context: 'Errors',
        msg: 'Unexpected error',
        err: { stack: 'Error: x\n    at y' },
      }),
      expect.objectContaining({ ...IDS, msg: 'careful', context: 'Idempotency' }),
    ]);
  });

  it('reads the server span ids the HTTP instrumentation left on the request', () => {
    expect(serverSpanIdsOf({ [SERVER_SPAN_IDS]: IDS })).toEqual(IDS);
  });

  it('flushes and stops the SDK once on shutdown', async () => {
    const shutdown = jest.fn(() => Promise.resolve());
    registerTracing({ activeIds: () => IDS, shutdown, description: 'test' });
    await shutdownTracing();
    await shutdownTracing();
    expect(shutdown).toHaveBeenCalledTimes(1);
    expect(tracingDescription()).toBeUndefined();
  });
});
