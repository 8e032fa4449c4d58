import { Global, Module } from '@nestjs/common';
import { ApiKeysModule } from '../../api-keys/api-keys.module';
import { ApiKeysService } from '../../api-keys/api-keys.service';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { createAbuseLimiter, AbuseLimiter } from './abuse-limiter';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { setUpKeys } from './key-setup';

export const KEY_SETUP = Symbol('KEY_SETUP');

@Global()
@Module({
  imports: [ApiKeysModule],
  providers: [
    {
      provide: KEY_SETUP,
      inject: [APP_CONFIG, ApiKeysService],
      useFactory: (config: AppConfig, apiKeys: ApiKeysService) => setUpKeys(config, apiKeys),
    },
    {
      provide: ApiKeyStore,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new ApiKeyStore(config.apiKeys),
    },
    {
      provide: AbuseLimiter,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        createAbuseLimiter({
          enabled: config.rateLimitEnabled,
          limit: config.authFailuresPerMinute,
          redisUrl: config.redisUrl,
        }),
    },
    ApiKeyGuard,
  ],
  exports: [KEY_SETUP, ApiKeyStore, ApiKeyGuard],
})
export class AuthModule {}
