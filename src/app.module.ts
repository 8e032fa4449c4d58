import { DynamicModule, Module, Provider } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ApiKeyGuard } from './auth/api-key.guard';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter';
import { createRootLogger } from './common/logging/loggers';
import { LoggingModule } from './common/logging/logging.module';
import { RequestValidationPipe } from './common/validation/request-validation.pipe';
import { AppConfig } from './config/app-config';
import { AppConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { FEATURES } from './features';
import { ObservabilityModule } from './observability/observability.module';
import { RateLimitGuard } from './rate-limit/rate-limit.guard';
import { RateLimitModule } from './rate-limit/rate-limit.module';

/**
 * The global guards, in the order they run: authentication first (it spends the per-address
 * abuse budget of requests without a valid key, before any key lookup), then the per-key
 * rate limit, which so only ever counts authenticated requests.
 */
export function globalGuards(config: AppConfig): Provider[] {
  return [
    { provide: APP_GUARD, useExisting: ApiKeyGuard },
    ...(config.rateLimitEnabled ? [{ provide: APP_GUARD, useExisting: RateLimitGuard }] : []),
  ];
}

/**
 * The application: configuration, logging, metrics, database, rate limits, the feature modules
 * of src/features.ts, and the global pipeline (guards, pipe and filter) as providers, so every
 * test that builds this module runs the real pipeline.
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
        RateLimitModule.forRoot(config),
        ...FEATURES.map((feature) => feature.module),
      ],
      providers: [
        ...globalGuards(config),
        { provide: APP_PIPE, useClass: RequestValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }
}
