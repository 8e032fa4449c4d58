import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeysService } from './api-keys.service';
import { AUTH_SCHEMA } from './auth.schema';
import { setUpKeys } from './key-setup';

export const KEY_SETUP = Symbol('KEY_SETUP');

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([...AUTH_SCHEMA.entities])],
  providers: [
    ApiKeysService,
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
    ApiKeyGuard,
  ],
  exports: [KEY_SETUP, ApiKeyStore, ApiKeyGuard],
})
export class AuthModule {}
