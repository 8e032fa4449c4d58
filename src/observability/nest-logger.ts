import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { activeTraceIds } from './tracing-state';

/**
 * Nest's logger interface on the app's pino logger. Nest calls `log(message, context)` and
 * `error(message, stack, context)` (a `Logger` made with a context adds it last); the context
 * becomes the `context` field and a stack the `err.stack` field. A plain object as the first
 * argument is merged into the line, the next string is its message:
 * `logger.error({ reqId }, 'Unexpected error')`.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    // With tracing on, a line written while serving a request names its trace and span.
    const fields: Record<string, unknown> = { ...activeTraceIds() };
    const rest = [...params];
    const last = rest[rest.length - 1];
    // The context comes last; a lone string after an error's message is its stack only when
    // it looks like one.
    if (typeof last === 'string' && !(level === 'error' && rest.length === 1 && last.includes('\n')))
      fields.context = rest.pop();
    let text: string | undefined;
    if (message instanceof Error) {
      fields.err = message;
      text = message.message;
    } else if (message !== null && typeof message === 'object') {
      Object.assign(fields, message);
    } else {
      text = String(message);
    }
    if (text === undefined && typeof rest[0] === 'string') text = rest.shift() as string;
    if (level === 'error' && (typeof rest[0] === 'string' || (rest.length > 0 && rest[0] === undefined))) {
      const stack = rest.shift();
      if (stack) fields.err = { stack };
    }
    const left = rest.filter((param) => param !== undefined);
    if (left.length > 0) fields.params = left;
    this.root[level](fields, text);
  }
}
