import { once } from 'node:events';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { FAILED_AUTH_BUDGET } from '../auth/failed-auth-budget';
import { RateLimitConfig } from '../config/app-config';
import { PinoNestLogger } from '../observability/nest-logger';
import { AbuseLimiter } from './abuse-limiter';
import { Counters, MemoryCounters, RedisCounters, ResilientCounters } from './counters';
import { RateLimitGuard } from './rate-limit.guard';

export const COUNTERS = Symbol('COUNTERS');

const REDIS_CONNECT_WAIT_MS = 2000;

/** No offline queue and no retried command: a request never waits for Redis to come back. */
async function redisCounters(url: string, logger: PinoNestLogger): Promise<Counters> {
  // Loaded only with REDIS_URL: without it the Redis client stays out of the process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis } = require('ioredis') as typeof import('ioredis');
  const redis = new Redis(url, {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  });
  redis.on('error', () => undefined); // ResilientCounters reports a failed count
  const counters = new ResilientCounters(new RedisCounters(redis), logger);
  await once(redis, 'ready', { signal: AbortSignal.timeout(REDIS_CONNECT_WAIT_MS) }).catch(() =>
    counters.markDown(`Redis at REDIS_URL did not answer within ${REDIS_CONNECT_WAIT_MS} ms`),
  );
  return counters;
}

@Global()
@Module({})
export class RateLimitModule {
  static forRoot(config: RateLimitConfig): DynamicModule {
    if (!config.enabled) return { module: RateLimitModule };
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          inject: [COUNTERS],
          useFactory: (counters: Counters) => ({
            throttlers: [{ name: 'default', ttl: 60_000, limit: config.perMinute }],
            storage: counters,
            setHeaders: false,
          }),
        }),
      ],
      providers: [
        {
          provide: COUNTERS,
          inject: [PinoNestLogger],
          useFactory: (logger: PinoNestLogger) =>
            config.redisUrl ? redisCounters(config.redisUrl, logger) : new MemoryCounters(),
        },
        {
          provide: FAILED_AUTH_BUDGET,
          inject: [COUNTERS],
          useFactory: (counters: Counters) => new AbuseLimiter(counters, config.authFailuresPerMinute),
        },
        RateLimitGuard,
      ],
      // AppModule registers the guard globally: it decides the order of the guards.
      exports: [COUNTERS, FAILED_AUTH_BUDGET, RateLimitGuard],
    };
  }
}
