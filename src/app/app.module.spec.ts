import { APP_GUARD } from '@nestjs/core';
import pino from 'pino';
import { AppModule } from './app.module';
import { ApiKeyGuard, ScopeGuard } from '../auth/api-key.guard';
import { loadConfig } from '../config/app-config';
import { RateLimitGuard } from '../rate-limit/rate-limit.guard';

/** The global guards AppModule registers, in the order Nest runs them. */
function globalGuards(env: Record<string, string>): unknown[] {
  const module = AppModule.forRoot(loadConfig(env), pino({ level: 'silent' }));
  return (module.providers ?? [])
    .filter(
      (provider) => typeof provider === 'object' && 'provide' in provider && provider.provide === APP_GUARD,
    )
    .map((provider) => (provider as { useExisting: unknown }).useExisting);
}

describe('AppModule global guards', () => {
  it('authenticate, limit per key, then check the scope: a valid key is counted, a request without one is not', () => {
    expect(globalGuards({ RATE_LIMIT_ENABLED: 'true' })).toEqual([ApiKeyGuard, RateLimitGuard, ScopeGuard]);
  });

  it('leave the per-key limit out when limits are off', () => {
    expect(globalGuards({ RATE_LIMIT_ENABLED: 'false' })).toEqual([ApiKeyGuard, ScopeGuard]);
  });
});
