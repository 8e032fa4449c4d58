import { ApiException } from '../common/errors/api-exception';
import { AbuseLimiter } from './abuse-limiter';
import { MemoryCounters } from './counters';

describe('AbuseLimiter', () => {
  it('lets an address through until it has failed `limit` times, then refuses it with 429 and Retry-After', async () => {
    const limiter = new AbuseLimiter(new MemoryCounters(), 2);
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    await limiter.failed('192.0.2.1');
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    await limiter.failed('192.0.2.1');

    const refused = await limiter.refusal('192.0.2.1');
    expect(refused).toBeInstanceOf(ApiException);
    expect(refused).toMatchObject({
      code: 'rate_limited',
      message: 'Too many requests without a valid API key from this address. Retry after 60 seconds.',
      headers: { 'Retry-After': '60' },
    });
    expect(refused!.getStatus()).toBe(429);
    await expect(limiter.refusal('192.0.2.2')).resolves.toBeUndefined();
  });

  it('counts on the same store as the per-key limit, apart from its keys', async () => {
    const counters = new MemoryCounters();
    const limiter = new AbuseLimiter(counters, 1);
    await counters.increment('petstore:ratelimit:default:key:abc', 60_000, 10, 60_000);
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    await limiter.failed('192.0.2.1');
    await expect(counters.peek('petstore:abuse:192.0.2.1', 60_000)).resolves.toMatchObject({ count: 1 });
  });
});
