import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config';
import { AccessTokens } from './access-tokens';
import { ApiKeyGuard, ScopeGuard } from './api-key.guard';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeyStore } from './api-key.store';
import { ApiKeysService, KEY_POLICY } from './api-keys.service';
import { AUTH_SCHEMA } from './auth.schema';
import { setUpKeys } from './key-setup';

export const KEY_SETUP = Symbol('KEY_SETUP');

@Global()
@Module({})
export class AuthModule {
  static forRoot(config: Pick<AppConfig, 'auth' | 'nodeEnv'>): DynamicModule {
    return {
      module: AuthModule,
      imports: [TypeOrmModule.forFeature([...AUTH_SCHEMA.entities])],
      controllers: [ApiKeysController],
      providers: [
        { provide: KEY_POLICY, useValue: config.auth },
        ApiKeysService,
        {
          provide: KEY_SETUP,
          inject: [ApiKeysService],
          useFactory: (apiKeys: ApiKeysService) => setUpKeys(config, apiKeys),
        },
        { provide: ApiKeyStore, useValue: new ApiKeyStore(config.auth.apiKeys) },
        { provide: AccessTokens, useFactory: () => AccessTokens.discover(config.auth) },
        ApiKeyGuard,
        ScopeGuard,
      ],
      exports: [KEY_SETUP, ApiKeyStore, ApiKeyGuard, ScopeGuard, AccessTokens],
    };
  }
}
