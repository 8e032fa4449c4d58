import { hitsOf } from '../../test/support/counters';
import { Counters, MemoryCounters, ResilientCounters, SHARED_STORE_RETRY_MS } from './counters';

describe('MemoryCounters', () => {
  let now: number;
  let counters: MemoryCounters;
  const hit = (key = 'key:a', limit = 3, ttl = 60_000, block = 60_000) =>
    counters.increment(key, ttl, limit, block);

  beforeEach(() => {
    now = 1_000_000;
    counters = new MemoryCounters(100_000, () => now);
  });

  it('counts the hits of a key within its window, and the seconds left of it', async () => {
    await expect(hit()).resolves.toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
      refund: expect.any(Function),
    });
    now += 20_500;
    await expect(hit()).resolves.toEqual({
      totalHits: 2,
      timeToExpire: 40,
      isBlocked: false,
      timeToBlockExpire: 0,
      refund: expect.any(Function),
    });
    await expect(hit('key:b')).resolves.toMatchObject({ totalHits: 1, timeToExpire: 60 });
    await expect(hitsOf(counters, 'key:a')).resolves.toBe(2);
  });

  it('refuses a key over its limit for the block duration, then counts afresh', async () => {
    for (let i = 0; i < 3; i++) await expect(hit()).resolves.toMatchObject({ isBlocked: false });
    await expect(hit()).resolves.toEqual({
      totalHits: 4,
      timeToExpire: 60,
      isBlocked: true,
      timeToBlockExpire: 60,
      refund: expect.any(Function),
    });
    now += 30_000;
    await expect(hit()).resolves.toMatchObject({ isBlocked: true, timeToBlockExpire: 30 });
    await expect(hit('key:b')).resolves.toMatchObject({ isBlocked: false }); // other keys are not held back
    now += 30_000;
    await expect(hit()).resolves.toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
      refund: expect.any(Function),
    });
  });

  it('forgets a window once it has ended', async () => {
    await hit();
    await expect(hitsOf(counters, 'key:a')).resolves.toBe(1);
    now += 60_000;
    await expect(hitsOf(counters, 'key:a')).resolves.toBe(0);
  });

  it('is bounded: the least recently used key goes first', async () => {
    counters = new MemoryCounters(2, () => now);
    for (const key of ['a', 'b', 'c']) await hit(key);

    await expect(hitsOf(counters, 'a')).resolves.toBe(0);
    await expect(hitsOf(counters, 'c')).resolves.toBe(1);
  });

  it('keeps a count, not a record per hit: 300,000 hits under a limit of 10,000,000 in one window', async () => {
    let last;
    for (let i = 0; i < 300_000; i++) last = await hit('key:a', 10_000_000);
    expect(last).toEqual({
      totalHits: 300_000,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
      refund: expect.any(Function),
    });
  });
});

/** A shared store that counts in memory while `up`, fails while `down`, and never answers while `hanging`. */
class FlakyCounters implements Counters {
  mode: 'up' | 'down' | 'hanging' = 'up';
  calls = 0;
  private readonly inner = new MemoryCounters();

  async increment(key: string, ttl: number, limit: number, blockDuration: number) {
    const counted = await this.answer(() => this.inner.increment(key, ttl, limit, blockDuration));
    return { ...counted, refund: () => this.answer(counted.refund) };
  }

  private answer<T>(result: () => Promise<T>): Promise<T> {
    this.calls += 1;
    if (this.mode === 'down') return Promise.reject(new Error('Connection is closed.'));
    if (this.mode === 'hanging') return new Promise(() => undefined);
    return result();
  }
}

describe('ResilientCounters', () => {
  let now: number;
  const logger = { warn: jest.fn(), log: jest.fn() };
  const count = (counters: Counters) => counters.increment('k', 60_000, 2, 60_000, 'default');

  beforeEach(() => {
    now = 1_000_000;
    logger.warn.mockClear();
    logger.log.mockClear();
  });

  it('counts per instance while the shared store is down (limits still hold), then shared again', async () => {
    const shared = new FlakyCounters();
    const counters = new ResilientCounters(shared, logger, 250, new MemoryCounters(), () => now);
    expect((await count(counters)).totalHits).toBe(1);

    shared.mode = 'down';
    const blocked = [];
    for (let i = 0; i < 4; i++) blocked.push((await count(counters)).isBlocked);
    expect(blocked).toEqual([false, false, true, true]);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn).toHaveBeenCalledWith(
      'rate-limit store unavailable (Connection is closed.): counting per instance until it answers again',
      'RateLimit',
    );
    // While down, the shared store is asked at most once a second.
    expect(shared.calls).toBe(2);

    shared.mode = 'up';
    now += SHARED_STORE_RETRY_MS;
    expect((await count(counters)).totalHits).toBe(2);
    expect(logger.log).toHaveBeenCalledWith(expect.stringMatching(/counting shared again$/), 'RateLimit');
  });

  it('counts per instance when the shared store does not answer in time', async () => {
    const shared = new FlakyCounters();
    shared.mode = 'hanging';
    const counters = new ResilientCounters(shared, logger, 20);
    const started = Date.now();

    await expect(count(counters)).resolves.toMatchObject({ totalHits: 1 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(logger.warn.mock.calls[0][0]).toMatch(/no answer within 20 ms/);
  });

  it('gives a hit back to the store that counted it only, and drops it if the shared store fails then', async () => {
    const shared = new FlakyCounters();
    const local = new MemoryCounters();
    const counters = new ResilientCounters(shared, logger, 20, local, () => now);
    const sharedHit = await count(counters);
    shared.mode = 'down';
    const localHit = await count(counters);

    shared.mode = 'hanging';
    await sharedHit.refund();
    await expect(hitsOf(local, 'k')).resolves.toBe(1);
    await localHit.refund();
    await expect(hitsOf(local, 'k')).resolves.toBe(0);
    shared.mode = 'up';
    await expect(hitsOf(shared, 'k')).resolves.toBe(1);
  });

  it('starts per instance when told the shared store was down at start', async () => {
    const shared = new FlakyCounters();
    const counters = new ResilientCounters(shared, logger, 250, new MemoryCounters(), () => now);
    counters.markDown('Redis at REDIS_URL did not answer within 2000 ms');

    await count(counters);
    expect(shared.calls).toBe(0);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });
});
