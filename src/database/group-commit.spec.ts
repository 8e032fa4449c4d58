import { GroupCommit, MAX_GROUP_SIZE } from './group-commit';

const ok = <R>(values: R[]): PromiseSettledResult<R>[] =>
  values.map((value) => ({ status: 'fulfilled', value }));

interface Deferred {
  items: string[];
  resolve: (results: string[]) => void;
  reject: (error: Error) => void;
}

/** A commit function whose calls stay open until the test settles them. */
function controlledCommit() {
  const calls: Deferred[] = [];
  let open = 0;
  let maxOpen = 0;
  const commit = jest.fn(
    (items: string[]) =>
      new Promise<PromiseSettledResult<string>[]>((resolve, reject) => {
        open += 1;
        maxOpen = Math.max(maxOpen, open);
        const settle =
          <A>(fn: (arg: A) => void) =>
          (arg: A) => {
            open -= 1;
            fn(arg);
          };
        calls.push({
          items,
          resolve: settle((results: string[]) => resolve(ok(results))),
          reject: settle(reject),
        });
      }),
  );
  return { commit, calls, maxOpen: () => maxOpen };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
/** A finished commit frees its place, and the queue goes out on the turn after. */
const afterCommit = async () => {
  await turn();
  await turn();
};

/** Settles to 'pending' if the promise has not settled by the next event-loop turn. */
async function state(promise: Promise<unknown>): Promise<string> {
  return Promise.race([
    promise.then(
      (value) => `resolved ${String(value)}`,
      (error: Error) => `rejected ${error.message}`,
    ),
    turn().then(() => 'pending'),
  ]);
}

describe('GroupCommit', () => {
  it('commits a lone item on its own and answers with its result', async () => {
    const group = new GroupCommit((items: string[]) =>
      Promise.resolve(ok(items.map((item) => item.toUpperCase()))),
    );

    await expect(group.add('a')).resolves.toBe('A');
  });

  it('commits items that arrive together in one call, answering each with its own result', async () => {
    const commit = jest.fn((items: string[]) => Promise.resolve(ok(items.map((item) => `${item}!`))));
    const group = new GroupCommit(commit);

    const results = await Promise.all(['a', 'b', 'c'].map((item) => group.add(item)));

    expect(results).toEqual(['a!', 'b!', 'c!']);
    expect(commit).toHaveBeenCalledTimes(1);
    expect(commit).toHaveBeenCalledWith(['a', 'b', 'c']);
  });

  it('answers no caller before the commit holding its item has finished', async () => {
    const { commit, calls } = controlledCommit();
    const group = new GroupCommit(commit);

    const a = group.add('a');
    await turn();
    expect(calls).toHaveLength(1);
    expect(await state(a)).toBe('pending');

    calls[0].resolve(['A']);
    expect(await state(a)).toBe('resolved A');
  });

  it('with one commit at a time, groups the items that arrive during a commit into the next one', async () => {
    const { commit, calls, maxOpen } = controlledCommit();
    const group = new GroupCommit(commit, MAX_GROUP_SIZE, 1);

    const first = group.add('a');
    await turn();
    const later = ['b', 'c', 'd'].map((item) => group.add(item));
    await turn();
    expect(calls.map((call) => call.items)).toEqual([['a']]);

    calls[0].resolve(['A']);
    await afterCommit();
    expect(calls.map((call) => call.items)).toEqual([['a'], ['b', 'c', 'd']]);
    expect(await state(later[0])).toBe('pending');

    calls[1].resolve(['B', 'C', 'D']);
    expect(await Promise.all([first, ...later])).toEqual(['A', 'B', 'C', 'D']);
    expect(maxOpen()).toBe(1);
  });

  it('keeps two commits running by default, and groups what arrives meanwhile', async () => {
    const { commit, calls, maxOpen } = controlledCommit();
    const group = new GroupCommit(commit);

    const a = group.add('a');
    await turn();
    const b = group.add('b');
    await turn();
    const later = ['c', 'd', 'e'].map((item) => group.add(item));
    await turn();
    expect(calls.map((call) => call.items)).toEqual([['a'], ['b']]);

    calls[1].resolve(['B']);
    await afterCommit();
    expect(calls.map((call) => call.items)).toEqual([['a'], ['b'], ['c', 'd', 'e']]);
    expect(await state(a)).toBe('pending');
    expect(await state(b)).toBe('resolved B');

    calls[0].resolve(['A']);
    calls[2].resolve(['C', 'D', 'E']);
    expect(await Promise.all([a, ...later])).toEqual(['A', 'C', 'D', 'E']);
    expect(maxOpen()).toBe(2);
  });

  it('splits a long queue into groups of at most the group size', async () => {
    const commit = jest.fn((items: number[]) => Promise.resolve(ok(items)));
    const group = new GroupCommit(commit, 2);

    await expect(Promise.all([1, 2, 3, 4, 5].map((item) => group.add(item)))).resolves.toEqual([
      1, 2, 3, 4, 5,
    ]);
    expect(commit.mock.calls.map(([items]) => items)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('fails every item of a failed group, and only that group', async () => {
    const { commit, calls } = controlledCommit();
    const group = new GroupCommit(commit);

    const first = Promise.allSettled([group.add('a'), group.add('b')]);
    await turn();
    const second = group.add('c');
    calls[0].reject(new Error('SQLITE_FULL'));
    await turn();
    calls[1].resolve(['C']);

    expect((await first).map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect((await first).map((result) => (result as PromiseRejectedResult).reason)).toEqual([
      new Error('SQLITE_FULL'),
      new Error('SQLITE_FULL'),
    ]);
    await expect(second).resolves.toBe('C');
    expect(commit).toHaveBeenCalledTimes(2);
  });

  it('answers each item of a group with its own outcome', async () => {
    const refused = new Error('refused');
    const group = new GroupCommit((items: string[]) =>
      Promise.resolve(
        items.map((item): PromiseSettledResult<string> =>
          item === 'bad' ? { status: 'rejected', reason: refused } : { status: 'fulfilled', value: item },
        ),
      ),
    );

    const results = await Promise.allSettled(['a', 'bad', 'c'].map((item) => group.add(item)));

    expect(results).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: refused },
      { status: 'fulfilled', value: 'c' },
    ]);
  });

  it('starts again after it went idle', async () => {
    const commit = jest.fn((items: string[]) => Promise.resolve(ok(items)));
    const group = new GroupCommit(commit);

    await group.add('a');
    await turn();
    await group.add('b');

    expect(commit.mock.calls.map(([items]) => items)).toEqual([['a'], ['b']]);
  });
});
