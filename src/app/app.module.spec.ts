import { APP_GUARD } from '@nestjs/core';
import pino from 'pino';
import { AppModule } from './app.module';
import { ApiKeyGuard } from '../auth/api-key.guard';
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
  it('authenticate first, then limit per key: the per-key limit never counts a request without a valid key', () => {
    expect(globalGuards({ RATE_LIMIT_ENABLED: 'true' })).toEqual([ApiKeyGuard, RateLimitGuard]);
  });

  it('leave the per-key limit out when limits are off', () => {
    expect(globalGuards({ RATE_LIMIT_ENABLED: 'false' })).toEqual([ApiKeyGuard]);
  });
});
