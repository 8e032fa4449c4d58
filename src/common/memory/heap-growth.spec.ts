import { execFileSync } from 'node:child_process';
import { HEAP_GROWING_PERCENT, limitHeapGrowth } from './heap-growth';

const setFlags = jest.fn();
jest.mock('node:v8', () => ({ setFlagsFromString: (flags: string) => setFlags(flags) }));

describe('limitHeapGrowth', () => {
  beforeEach(() => setFlags.mockClear());

  it('sets the growth when the process was started without one', () => {
    expect(limitHeapGrowth([], '')).toBe(true);
    expect(setFlags).toHaveBeenCalledWith(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  });

  it.each([
    [['--heap-growing-percent=30'], ''],
    [[], '--enable-source-maps --heap_growing_percent=50'],
    [['--max-old-space-size=128'], ''],
    [[], '--max_old_space_size=256'],
    [['--max-old-space-size', '128'], ''],
  ])(
    'leaves a growth or heap limit given at start (%j, NODE_OPTIONS %j) as it is',
    (execArgv, nodeOptions) => {
      expect(limitHeapGrowth(execArgv, nodeOptions)).toBe(false);
      expect(setFlags).not.toHaveBeenCalled();
    },
  );

  it('does not mistake another flag for one of those', () => {
    expect(limitHeapGrowth(['--max-old-space-size-percentage=50'], '--heap-growing')).toBe(true);
  });
});

describe('the flag', () => {
  it('is one this Node knows (V8 ignores a flag it does not know, silently)', () => {
    expect(execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' })).toMatch(
      /^\s*--heap-growing-percent \(/m,
    );
  });
});
