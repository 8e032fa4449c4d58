import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysModule } from '../../api-keys/api-keys.module';
import { ApiKeysService } from '../../api-keys/api-keys.service';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
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
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [KEY_SETUP, ApiKeyStore],
})
export class AuthModule {}
