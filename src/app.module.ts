import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './common/auth/auth.module';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { createRootLogger } from './common/logging/loggers';
import { LoggingModule } from './common/logging/logging.module';
import { RequestValidationPipe } from './common/validation/request-validation.pipe';
import { AppConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { ObservabilityModule } from './observability/observability.module';
import { PetsModule } from './pets/pets.module';
import { RateLimitModule } from './rate-limit/rate-limit.module';

/**
 * The application: configuration, database, auth, feature modules, and the global pipeline
 * (guard in AuthModule, pipe and filter here) as providers, so every test that builds this
 * module runs the real pipeline.
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger = createRootLogger(config)): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        ObservabilityModule.forRoot(config),
        DatabaseModule.forRoot(config),
        AuthModule,
        RateLimitModule.forRoot(config),
        HealthModule,
        PetsModule,
      ],
      providers: [
        { provide: APP_PIPE, useClass: RequestValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
