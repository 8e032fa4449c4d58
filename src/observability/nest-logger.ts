import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { activeTraceIds } from './tracing-state';

/** Nest calls `error(message, stack, context)`; a leading plain object is merged into the line. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly root: Logger) {}

  log = (message: unknown, ...params: unknown[]): void => this.write('info', message, params);
  error = (message: unknown, ...params: unknown[]): void => this.write('error', message, params);
  warn = (message: unknown, ...params: unknown[]): void => this.write('warn', message, params);
  debug = (message: unknown, ...params: unknown[]): void => this.write('debug', message, params);
  verbose = (message: unknown, ...params: unknown[]): void => this.write('trace', message, params);
  fatal = (message: unknown, ...params: unknown[]): void => this.write('fatal', message, params);

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.root.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = { ...activeTraceIds() };
    const rest = [...params];
    const last = rest[rest.length - 1];
    // The context comes last; a lone string after an error's message is a stack only if multi-line.
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
