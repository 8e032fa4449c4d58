import { WindowCounters } from './window-counters';

describe('WindowCounters', () => {
  let now: number;
  let counters: WindowCounters;
  const hit = (key = 'key:a', limit = 3, ttl = 60_000, block = 60_000) =>
    counters.increment(key, ttl, limit, block, 'default');

  beforeEach(() => {
    now = 1_000_000;
    counters = new WindowCounters(() => now);
  });

  it('counts the hits of a key within its window, and the seconds left of it', async () => {
    await expect(hit()).resolves.toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    now += 20_500;
    await expect(hit()).resolves.toEqual({
      totalHits: 2,
      timeToExpire: 40,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    await expect(hit('key:b')).resolves.toMatchObject({ totalHits: 1, timeToExpire: 60 });
  });

  it('refuses a key over its limit for the block duration, then counts afresh', async () => {
    for (let i = 0; i < 3; i++) await expect(hit()).resolves.toMatchObject({ isBlocked: false });
    await expect(hit()).resolves.toEqual({
      totalHits: 4,
      timeToExpire: 60,
      isBlocked: true,
      timeToBlockExpire: 60,
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
    });
  });

  it('keeps separate counts per throttler name', async () => {
    await counters.increment('key:a', 60_000, 5, 60_000, 'default');
    await expect(counters.increment('key:a', 1_000, 5, 1_000, 'burst')).resolves.toMatchObject({
      totalHits: 1,
    });
  });

  it('drops the counters of keys whose window and block are over', async () => {
    await hit('key:a');
    await hit('key:b', 0); // over its limit at once: blocked
    expect(counters.size).toBe(2);
    now += 60_000;
    await hit('key:c');
    expect(counters.size).toBe(1);
  });

  it('keeps a count, not a record per hit: 300,000 hits under a limit of 10,000,000 in one window', async () => {
    let last;
    for (let i = 0; i < 300_000; i++) last = await hit('key:a', 10_000_000);
    expect(last).toEqual({ totalHits: 300_000, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
  });
});
