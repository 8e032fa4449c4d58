import { Logger } from '@nestjs/common';
import { ApiException } from '../common/errors/api-exception';
import { SHARED_STORE_RETRY_MS } from '../common/resilience/shared-or-local';
import { AbuseLimiter, Counters, FallbackCounters, MemoryCounters, WindowCount } from './abuse-limiter';

const MINUTE = 60_000;

/** A shared store that fails, hangs or answers as the test says, and counts in memory when it answers. */
class FlakyCounters implements Counters {
  mode: 'up' | 'down' | 'hanging' = 'up';
  private readonly inner = new MemoryCounters();

  peek(key: string, windowMs: number): Promise<WindowCount> {
    return this.answer(() => this.inner.peek(key, windowMs));
  }

  hit(key: string, windowMs: number): Promise<WindowCount> {
    return this.answer(() => this.inner.hit(key, windowMs));
  }

  private answer(result: () => Promise<WindowCount>): Promise<WindowCount> {
    if (this.mode === 'down') return Promise.reject(new Error('Connection is closed.'));
    if (this.mode === 'hanging') return new Promise(() => undefined);
    return result();
  }
}

describe('MemoryCounters', () => {
  it('counts hits in a window that starts with the first hit, and forgets them when it ends', async () => {
    const counters = new MemoryCounters();
    await counters.hit('a', MINUTE, 1000);
    await counters.hit('a', MINUTE, 2000);

    await expect(counters.peek('a', MINUTE, 31_000)).resolves.toEqual({ count: 2, resetInMs: 30_000 });
    await expect(counters.peek('b', MINUTE, 31_000)).resolves.toEqual({ count: 0, resetInMs: MINUTE });
    await expect(counters.peek('a', MINUTE, 61_000)).resolves.toEqual({ count: 0, resetInMs: MINUTE });
    await expect(counters.hit('a', MINUTE, 61_000)).resolves.toEqual({ count: 1, resetInMs: MINUTE });
  });

  it('is bounded: the least recently used key goes first', async () => {
    const counters = new MemoryCounters(2);
    await counters.hit('a', MINUTE);
    await counters.hit('b', MINUTE);
    await counters.hit('c', MINUTE);

    expect((await counters.peek('a', MINUTE)).count).toBe(0);
    expect((await counters.peek('c', MINUTE)).count).toBe(1);
  });
});

describe('FallbackCounters', () => {
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('counts in the process while the shared store is down, warns once, and goes back when it returns', async () => {
    const shared = new FlakyCounters();
    let now = 1_000_000;
    const counters = new FallbackCounters(shared, new MemoryCounters(), 250, () => now);
    await counters.hit('k', MINUTE);

    shared.mode = 'down';
    await counters.hit('k', MINUTE);
    await counters.hit('k', MINUTE);
    await expect(counters.peek('k', MINUTE)).resolves.toMatchObject({ count: 2 });
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(
      /^abuse-limit store unavailable \(Connection is closed\.\): counting per instance until it answers again$/,
    );

    shared.mode = 'up';
    now += SHARED_STORE_RETRY_MS; // while down, the shared store is asked at most once a second
    await expect(counters.peek('k', MINUTE)).resolves.toMatchObject({ count: 1 });
    expect(log).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('does not wait for a store that hangs', async () => {
    const shared = new FlakyCounters();
    shared.mode = 'hanging';
    const counters = new FallbackCounters(shared, new MemoryCounters(), 20);
    const started = Date.now();

    await expect(counters.hit('k', MINUTE)).resolves.toMatchObject({ count: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('AbuseLimiter', () => {
  it('lets an address through until it has failed `limit` times, then refuses it with 429 and Retry-After', async () => {
    const limiter = new AbuseLimiter(new MemoryCounters(), 2);
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    await limiter.failed('192.0.2.1');
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    await limiter.failed('192.0.2.1');

    const refused = await limiter.refusal('192.0.2.1');
    expect(refused).toBeInstanceOf(ApiException);
    expect(refused!.code).toBe('rate_limited');
    expect(refused!.getStatus()).toBe(429);
    expect(refused!.headers).toEqual({ 'Retry-After': '60' });
    await expect(limiter.refusal('192.0.2.2')).resolves.toBeUndefined();
  });

  it('with no counters (limits off) never refuses', async () => {
    const limiter = new AbuseLimiter(null, 1);
    for (let i = 0; i < 5; i++) await limiter.failed('192.0.2.1');
    await expect(limiter.refusal('192.0.2.1')).resolves.toBeUndefined();
    expect(limiter.enabled).toBe(false);
  });

  it('still limits, per instance, while the shared store is down', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const shared = new FlakyCounters();
    shared.mode = 'down';
    const limiter = new AbuseLimiter(new FallbackCounters(shared), 1);
    await limiter.failed('192.0.2.1');

    await expect(limiter.refusal('192.0.2.1')).resolves.toBeInstanceOf(ApiException);
    jest.restoreAllMocks();
  });
});
