import { Controller, Get, INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SkipThrottle, Throttle, ThrottlerModule } from '@nestjs/throttler';
import request from 'supertest';
import { Public } from '../auth/public.decorator';
import { RateLimitGuard } from './rate-limit.guard';
import { MemoryCounters } from './counters';

@Controller()
class LimitedController {
  @Get('plain')
  plain(): string {
    return 'ok';
  }

  @Throttle({ default: { limit: 1, ttl: 60_000 } })
  @Get('strict')
  strict(): string {
    return 'ok';
  }

  @SkipThrottle()
  @Get('skipped')
  skipped(): string {
    return 'ok';
  }

  @Public()
  @Get('public')
  open(): string {
    return 'ok';
  }
}

describe('RateLimitGuard (a Nest app with the module limit of 3 a minute)', () => {
  let app: INestApplication;

  beforeEach(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ThrottlerModule.forRoot({
          throttlers: [{ name: 'default', ttl: 60_000, limit: 3 }],
          storage: new MemoryCounters(),
          setHeaders: false,
        }),
      ],
      controllers: [LimitedController],
      providers: [RateLimitGuard, { provide: APP_GUARD, useExisting: RateLimitGuard }],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterEach(async () => {
    await app.close();
  });

  const statuses = async (path: string, times: number) => {
    const result: number[] = [];
    for (let i = 0; i < times; i++) result.push((await request(app.getHttpServer()).get(path)).status);
    return result;
  };

  it('counts a plain route against the module limit, with the RateLimit headers', async () => {
    const first = await request(app.getHttpServer()).get('/plain');
    expect(first.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
    expect(first.headers.ratelimit).toBe('"default";r=2;t=60');
    expect(await statuses('/plain', 3)).toEqual([200, 200, 429]);
  });

  it('honours @Throttle() on a route: its own limit', async () => {
    const first = await request(app.getHttpServer()).get('/strict');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"default";q=1;w=60');
    expect(await statuses('/strict', 1)).toEqual([429]);
  });

  it('does not count @SkipThrottle() or @Public() routes', async () => {
    expect(await statuses('/skipped', 5)).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses('/public', 5)).toEqual([200, 200, 200, 200, 200]);
    const res = await request(app.getHttpServer()).get('/public');
    expect(res.headers['ratelimit-policy']).toBeUndefined();
  });
});
