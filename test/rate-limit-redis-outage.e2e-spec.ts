import { randomBytes } from 'node:crypto';
import { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { startApp } from './support/app';
import { captureLogs } from './support/logs';
import { RedisServer, startRedisServer } from './support/servers';

/** A fresh key per test run, so counters left in Redis by earlier runs never interfere. */
const freshKey = () => `rl-${randomBytes(12).toString('hex')}`;

describe('Rate limits when a Redis server of its own stops and starts under load (e2e)', () => {
  let redis: RedisServer | undefined;
  const apps: NestExpressApplication[] = [];

  beforeAll(async () => {
    redis = await startRedisServer();
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await redis?.stop();
  });

  it('counts per instance during the outage (limits enforced, 0 x 5xx) and shared again afterwards', async () => {
    if (!redis) {
      if (process.env.CI) throw new Error('redis-server is missing (apt-get install -y redis-server)');
      console.warn('skipped: no redis-server binary on this machine');
      return;
    }
    const [key, probe, after] = [freshKey(), freshKey(), freshKey()];
    const [logs, logsB] = [captureLogs(), captureLogs()];
    const env = {
      API_KEYS: `${key},${probe},${after}`,
      LOG_LEVEL: 'info',
      RATE_LIMIT_ENABLED: 'true',
      RATE_LIMIT_PER_MINUTE: '6',
      REDIS_URL: redis.url,
    };
    const a = await startApp(env, { logDestination: logs.stream });
    const b = await startApp(env, { logDestination: logsB.stream });
    apps.push(a, b);
    const get = (app: NestExpressApplication, apiKey = key) =>
      request(app.getHttpServer()).get('/v1/pets').set('Authorization', `Bearer ${apiKey}`);
    const statusesOf = async (order: NestExpressApplication[], apiKey = key) => {
      const statuses = [];
      for (const app of order) statuses.push((await get(app, apiKey)).status);
      return statuses;
    };

    // Shared: 2 + 2 of the budget of 6 used through both instances.
    expect(await statusesOf([a, b, a, b])).toEqual([200, 200, 200, 200]);

    await redis.stop();
    // Each instance counts alone from zero: 6 each, then 429; no request waits or fails.
    const started = Date.now();
    expect(await statusesOf([a, a, a, a, a, a, a, b, b, b, b, b, b, b])).toEqual([
      ...Array<number>(6).fill(200),
      429,
      ...Array<number>(6).fill(200),
      429,
    ]);
    expect(Date.now() - started).toBeLessThan(5000);
    const warnings = logs.lines().filter((line) => String(line.msg).includes('rate-limit store unavailable'));
    expect(warnings).toHaveLength(1);

    await redis.start();
    // Each instance tries Redis again within a second and says so; then the budget of another
    // key is shared across both again (per instance, all eight would pass).
    await waitFor(async () => {
      await Promise.all([get(a, probe), get(b, probe)]);
      return [logs, logsB].every((captured) => captured.text().includes('counting shared again'));
    });
    expect(await statusesOf([a, b, a, b, a, b, a, b], after)).toEqual([
      200, 200, 200, 200, 200, 200, 429, 429,
    ]);
    expect([...logs.lines(), ...logsB.lines()].filter((line) => Number(line.level) >= 50)).toEqual([]);
  }, 30000);
});
/** Polls `check` every 100 ms until it holds (at most `timeoutMs`). */
async function waitFor(check: () => Promise<boolean>, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
