import pino, { DestinationStream, Logger } from 'pino';
import { AppConfig } from '../config/app-config';
import { REDACT_PATHS, REDACTED } from './redact';

/** Writes are synchronous so that nothing is lost on exit. */
export function createRootLogger(
  config: Pick<AppConfig, 'log' | 'nodeEnv'>,
  destination?: DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    level: config.log.level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
  };
  if (destination === undefined && config.nodeEnv !== 'production') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    return pino(
      options,
      pretty({
        destination: 1,
        sync: true,
        singleLine: true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname,method,url,status,durationMs',
      }),
    );
  }
  return pino(
    {
      ...options,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}
