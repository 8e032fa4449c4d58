import { Writable } from 'node:stream';

export type LogLine = Record<string, unknown>;

export interface CapturedLogs {
  /** Give this to `createApp` as `logDestination`. */
  stream: Writable;
  /** Everything written, exactly as written. */
  text: () => string;
  /** Each line, parsed as JSON. */
  lines: () => LogLine[];
}

/** A log destination that keeps what the app writes, for tests to read. */
export function captureLogs(): CapturedLogs {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as LogLine),
  };
}
