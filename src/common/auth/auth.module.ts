import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ResolvedKeys, resolveApiKeys } from './bootstrap-key';

export const RESOLVED_KEYS = Symbol('RESOLVED_KEYS');

@Global()
@Module({
  providers: [
    {
      provide: RESOLVED_KEYS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): ResolvedKeys =>
        resolveApiKeys(config.apiKeys, config.bootstrapKeyPath),
    },
    {
      provide: ApiKeyStore,
      inject: [RESOLVED_KEYS],
      useFactory: (resolved: ResolvedKeys) => new ApiKeyStore(resolved.keys),
    },
    { provide: APP_GUARD, useClass: ApiKeyGuard },
  ],
  exports: [RESOLVED_KEYS, ApiKeyStore],
})
export class AuthModule {}
