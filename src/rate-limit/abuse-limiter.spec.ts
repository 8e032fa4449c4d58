import { hitsOf } from '../../test/support/counters';
import type { Refund } from '../auth/failed-auth-budget';
import { ApiException } from '../common/errors/api-exception';
import { AbuseLimiter } from './abuse-limiter';
import { MemoryCounters } from './counters';

describe('AbuseLimiter', () => {
  it('lets an address spend `limit` units, then refuses it with 429 and Retry-After', async () => {
    const limiter = new AbuseLimiter(new MemoryCounters(), 2);
    await expect(limiter.reserve('192.0.2.1')).resolves.toEqual(expect.any(Function));
    await expect(limiter.reserve('192.0.2.1')).resolves.toEqual(expect.any(Function));

    const refused = await limiter.reserve('192.0.2.1');
    expect(refused).toBeInstanceOf(ApiException);
    expect(refused).toMatchObject({
      code: 'rate_limited',
      message: 'Too many requests without a valid API key from this address. Retry after 60 seconds.',
      headers: { 'Retry-After': '60' },
    });
    expect((refused as ApiException).getStatus()).toBe(429);
    await expect(limiter.reserve('192.0.2.2')).resolves.toEqual(expect.any(Function));
  });

  it('takes each unit in one step: 200 reservations at once get exactly `limit` through', async () => {
    const limiter = new AbuseLimiter(new MemoryCounters(), 30);
    const answers = await Promise.all(Array.from({ length: 200 }, () => limiter.reserve('192.0.2.9')));
    expect(answers.filter((answer) => !(answer instanceof ApiException))).toHaveLength(30);
  });

  it('gives a unit back for a key that turned out valid', async () => {
    const limiter = new AbuseLimiter(new MemoryCounters(), 1);
    const refund = await limiter.reserve('192.0.2.3');
    await (refund as Refund)();
    await expect(limiter.reserve('192.0.2.3')).resolves.toEqual(expect.any(Function));
    await expect(limiter.reserve('192.0.2.3')).resolves.toBeInstanceOf(ApiException);
  });

  it('counts on the same store as the per-key limit, apart from its keys', async () => {
    const counters = new MemoryCounters();
    const limiter = new AbuseLimiter(counters, 1);
    await counters.increment('petstore:ratelimit:default:key:abc', 60_000, 10, 60_000);
    await expect(limiter.reserve('192.0.2.1')).resolves.toEqual(expect.any(Function));
    await expect(hitsOf(counters, 'petstore:abuse:192.0.2.1')).resolves.toBe(1);
  });
});
