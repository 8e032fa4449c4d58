import { DynamicModule, Global, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { PinoNestLogger } from './nest-logger';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The app's root pino logger (`ROOT_LOGGER`) and Nest's logger on top of it (`PinoNestLogger`,
 * what `app.useLogger` is given). The request log middleware is installed by setupApp ahead of
 * everything else, so that body-parser errors get a request id and a log line too.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(root: Logger): DynamicModule {
    return {
      module: LoggingModule,
      providers: [
        { provide: ROOT_LOGGER, useValue: root },
        { provide: PinoNestLogger, useValue: new PinoNestLogger(root) },
      ],
      exports: [ROOT_LOGGER, PinoNestLogger],
    };
  }
}
