import { DynamicModule, Global, Module, RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * nestjs-pino on the app's root pino logger. The pino-http middleware itself is installed by
 * setupApp ahead of everything else (so body-parser errors get a request id and a log line
 * too); here nestjs-pino only binds each request's logger, so that Nest `Logger` calls made
 * while handling a request carry its id.
 */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(root: Logger): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: { logger: root },
          useExisting: true,
          forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
        }),
      ],
      providers: [{ provide: ROOT_LOGGER, useValue: root }],
      exports: [ROOT_LOGGER],
    };
  }
}
