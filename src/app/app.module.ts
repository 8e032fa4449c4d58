import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import type { Logger } from 'pino';
import { ApiKeyGuard, ScopeGuard } from '../auth/api-key.guard';
import { AuditModule } from '../audit/audit.module';
import { AuthModule } from '../auth/auth.module';
import { RequestValidationPipe } from '../common/validation/request-validation.pipe';
import { AppConfig } from '../config/app-config';
import { DatabaseModule } from '../database/database.module';
import { EventsModule } from '../events/events.module';
import { FEATURES, SCHEMAS } from '../features';
import { HealthModule } from '../health/health.module';
import { AllExceptionsFilter } from '../http/all-exceptions.filter';
import { LifecycleModule } from '../http/lifecycle';
import { ObservabilityModule } from '../observability/observability.module';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { VocabularyModule } from './vocabulary';

/** What every role of the process stands on: its lifecycle, logs and metrics, the database. */
const infrastructure = (config: AppConfig, logger: Logger) => [
  LifecycleModule,
  ObservabilityModule.forRoot(config.metrics, logger),
  DatabaseModule.forRoot(config.database, SCHEMAS),
];

/** The guards, pipe and filter are providers, so that every test that builds this module runs them. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...infrastructure(config, logger),
        RateLimitModule.forRoot(config.rateLimit),
        ...FEATURES.map((feature) => feature.module),
        VocabularyModule,
        // After the features: Express tries routes in order, and the collections' are the busy ones.
        AuthModule.forRoot(config),
        AuditModule.forRoot(config.audit),
        EventsModule.forRoot(config.events, config.process.role),
      ],
      providers: [
        // The key, its rate limit, then its scope: a valid key is counted whatever it is answered.
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        ...(config.rateLimit.enabled ? [{ provide: APP_GUARD, useExisting: RateLimitGuard }] : []),
        { provide: APP_GUARD, useExisting: ScopeGuard },
        { provide: APP_PIPE, useClass: RequestValidationPipe },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
      ],
    };
  }

  /** A delivery worker: the outbox's consumers, their audit, and the probes; no API route, no key. */
  static forWorker(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ...infrastructure(config, logger),
        HealthModule,
        AuditModule.forRoot(config.audit, false),
        EventsModule.forRoot(config.events, 'worker'),
      ],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    };
  }
}
