import { ThrottlerStorage } from '@nestjs/throttler';
import { SHARED_STORE_RETRY_MS } from '../common/resilience/shared-or-local';
import { ResilientStorage } from './resilient-storage';

/** A shared store that counts like Redis while `up`, and fails at once while it is not. */
function fakeShared() {
  const state = { up: true, calls: 0, hits: new Map<string, number>() };
  const store: ThrottlerStorage = {
    increment: (key, ttl, limit) => {
      state.calls += 1;
      if (!state.up)
        return Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
      const totalHits = (state.hits.get(key) ?? 0) + 1;
      state.hits.set(key, totalHits);
      return Promise.resolve({
        totalHits,
        timeToExpire: ttl / 1000,
        isBlocked: totalHits > limit,
        timeToBlockExpire: 0,
      });
    },
  };
  return { store, state };
}

describe('ResilientStorage', () => {
  let now: number;
  const logger = { warn: jest.fn(), log: jest.fn() };
  const count = (storage: ResilientStorage) => storage.increment('k', 60_000, 2, 60_000, 'default');

  beforeEach(() => {
    now = 1_000_000;
    logger.warn.mockClear();
    logger.log.mockClear();
  });

  it('counts per instance while the shared store is down (limits still hold), then shared again', async () => {
    const { store, state } = fakeShared();
    const storage = new ResilientStorage(store, logger, 250, undefined, () => now);

    expect((await count(storage)).totalHits).toBe(1);
    state.up = false;

    const blocked = [];
    for (let i = 0; i < 4; i++) blocked.push((await count(storage)).isBlocked);
    expect(blocked).toEqual([false, false, true, true]);
    expect(storage.degraded).toBe(true);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0][0]).toMatch(/^rate-limit store unavailable .*counting per instance/);
    // While down, the shared store is asked at most once a second.
    expect(state.calls).toBe(2);

    state.up = true;
    now += SHARED_STORE_RETRY_MS;
    expect((await count(storage)).totalHits).toBe(2);
    expect(storage.degraded).toBe(false);
    expect(logger.log).toHaveBeenCalledWith(expect.stringMatching(/counting shared again$/), 'RateLimit');
    storage.onModuleDestroy();
  });

  it('counts per instance when the shared store does not answer in time', async () => {
    const hanging: ThrottlerStorage = { increment: () => new Promise(() => undefined) };
    const storage = new ResilientStorage(hanging, logger, 20, undefined, () => now);

    expect(await count(storage)).toMatchObject({ totalHits: 1, isBlocked: false });
    expect(logger.warn.mock.calls[0][0]).toMatch(/no answer within 20 ms/);
    storage.onModuleDestroy();
  });

  it('starts per instance when told the shared store was down at start', async () => {
    const { store, state } = fakeShared();
    const storage = new ResilientStorage(store, logger, 250, undefined, () => now);
    storage.markDown('Redis at REDIS_URL did not answer within 2000 ms');

    expect(storage.degraded).toBe(true);
    expect((await count(storage)).totalHits).toBe(1);
    expect(state.calls).toBe(0);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    storage.onModuleDestroy();
  });
});
