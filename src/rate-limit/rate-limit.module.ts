import { once } from 'node:events';
import { DynamicModule, Logger, Module } from '@nestjs/common';
import { ThrottlerModule, ThrottlerModuleOptions, ThrottlerStorage } from '@nestjs/throttler';
import { PinoNestLogger } from '../common/logging/nest-logger';
import { AppConfig } from '../config/app-config';
import { RateLimitGuard } from './rate-limit.guard';
import { ResilientStorage } from './resilient-storage';
import { WindowCounters } from './window-counters';

const REDIS_CONNECT_WAIT_MS = 2000;

/**
 * Redis counters, connected before the first request (or, if Redis is down, counting per
 * instance until it answers). No offline queue and no retry of a command, so a request never
 * waits for Redis to come back; the connection itself is retried at least once a second.
 */
async function redisCounters(url: string, logger: PinoNestLogger): Promise<ThrottlerStorage> {
  // Loaded only with REDIS_URL: without it the Redis client stays out of the process.
  const { ThrottlerStorageRedisService } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('@nest-lab/throttler-storage-redis') as typeof import('@nest-lab/throttler-storage-redis');
  const store = new ThrottlerStorageRedisService(url, {
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  });
  store.redis.on('error', () => undefined); // a failed count is reported by ResilientStorage
  const ready = once(store.redis, 'ready').then(
    () => true,
    () => false,
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>(
    (resolve) => (timer = setTimeout(() => resolve(false), REDIS_CONNECT_WAIT_MS)),
  );
  const connected = await Promise.race([ready, timeout]);
  clearTimeout(timer);
  const storage = new ResilientStorage(store, logger);
  if (!connected) storage.markDown(`Redis at REDIS_URL did not answer within ${REDIS_CONNECT_WAIT_MS} ms`);
  return storage;
}

/**
 * Rate limits per API key with @nestjs/throttler. With REDIS_URL the counters live in Redis,
 * shared by every instance (atomic Lua INCR, no database write per request); without it they
 * live in this process (WindowCounters, counting the same way), which is right for the
 * embedded single-instance setup.
 */
@Module({})
export class RateLimitModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.rateLimitEnabled) return { module: RateLimitModule };
    const logger = new Logger('RateLimit');
    if (!config.redisUrl && config.databaseUrl) {
      logger.warn('REDIS_URL is not set: rate limits are counted per instance, not shared');
    }
    return {
      module: RateLimitModule,
      imports: [
        ThrottlerModule.forRootAsync({
          inject: [PinoNestLogger],
          useFactory: async (nestLogger: PinoNestLogger): Promise<ThrottlerModuleOptions> => ({
            throttlers: [{ name: 'default', ttl: 60_000, limit: config.rateLimitPerMinute }],
            storage: config.redisUrl
              ? await redisCounters(config.redisUrl, nestLogger)
              : new WindowCounters(),
            setHeaders: false,
          }),
        }),
      ],
      // Registered as a global guard by AppModule, which decides the order of the guards.
      providers: [RateLimitGuard],
      exports: [RateLimitGuard],
    };
  }
}
