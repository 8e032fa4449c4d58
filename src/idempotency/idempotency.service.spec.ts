import { Repository } from 'typeorm';
import { IdempotencyRecordEntity } from './idempotency-record.entity';
import { ClaimedKey, IdempotencyService } from './idempotency.service';

const CLAIMED: ClaimedKey = { owner: 'o'.repeat(64), idempotencyKey: 'k1', createdAt: Date.now() };

/** A repository whose delete fails while `down` is true, and records what it was asked. */
function fakeRecords() {
  const state = { down: true, deletes: [] as unknown[] };
  const records = {
    delete: jest.fn((criteria: unknown) => {
      if (state.down) return Promise.reject(new Error('Connection terminated unexpectedly'));
      state.deletes.push(criteria);
      return Promise.resolve({ affected: 1, raw: [] });
    }),
  };
  return { records: records as unknown as Repository<IdempotencyRecordEntity>, state };
}

describe('IdempotencyService.release', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('deletes only the claim it was given, and only while it is in flight', async () => {
    const { records, state } = fakeRecords();
    state.down = false;
    await new IdempotencyService(records).release(CLAIMED);
    expect(state.deletes).toEqual([{ ...CLAIMED, state: 'in_flight' }]);
  });

  it('when the database is away, passes the error on and releases in the background once it answers', async () => {
    const { records, state } = fakeRecords();
    const service = new IdempotencyService(records);

    await expect(service.release(CLAIMED)).rejects.toThrow('Connection terminated');
    await jest.advanceTimersByTimeAsync(2000);
    expect(state.deletes).toEqual([]);

    state.down = false;
    await jest.advanceTimersByTimeAsync(600);
    expect(state.deletes).toEqual([{ ...CLAIMED, state: 'in_flight' }]);
    await jest.advanceTimersByTimeAsync(5000);
    expect(state.deletes).toHaveLength(1);
    service.onModuleDestroy();
  });
});
