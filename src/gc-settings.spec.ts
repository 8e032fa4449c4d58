import { execFileSync } from 'node:child_process';
import { applyGcSettings, gcFlags, HEAP_GROWING_PERCENT } from './gc-settings';

const setFlags = jest.fn();
jest.mock('node:v8', () => ({ setFlagsFromString: (flags: string) => setFlags(flags) }));

const growth = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
const pretenuring = '--no-allocation-site-pretenuring';

describe('gcFlags', () => {
  it('sets the growth, and keeps concurrent marking where there is a second CPU for it', () => {
    expect(gcFlags({ execArgv: [], nodeOptions: '', cpus: 2 })).toEqual([growth, pretenuring]);
  });

  it('marks on the request thread when the process has one CPU', () => {
    expect(gcFlags({ execArgv: [], nodeOptions: '', cpus: 1 })).toEqual([
      growth,
      '--no-concurrent-marking',
      pretenuring,
    ]);
  });

  it.each([
    [['--heap-growing-percent=30'], ''],
    [['--heap_growing_percent=50'], ''],
    [['--max-old-space-size=128'], ''],
    [[], '--enable-source-maps --max_old_space_size=256'],
    [['--max-old-space-size', '128'], ''],
    [[], '--max-old-space-size-percentage=50'],
    [['--max-heap-size=512'], ''],
  ])(
    'leaves a growth or heap limit given at start (%j, NODE_OPTIONS %j) as it is',
    (execArgv, nodeOptions) => {
      expect(gcFlags({ execArgv, nodeOptions, cpus: 4 })).toEqual([pretenuring]);
    },
  );

  it.each([
    ['--concurrent-marking'],
    ['--no-concurrent-marking'],
    ['--no_concurrent_marking'],
    ['--noconcurrent-marking'],
  ])('leaves a marking flag given on the command line (%s) as it is', (flag) => {
    expect(gcFlags({ execArgv: [flag], nodeOptions: '', cpus: 1 })).toEqual([growth, pretenuring]);
  });

  it.each([['--allocation-site-pretenuring'], ['--no-allocation-site-pretenuring']])(
    'leaves a pretenuring flag given on the command line (%s) as it is',
    (flag) => {
      expect(gcFlags({ execArgv: [flag], nodeOptions: '', cpus: 2 })).toEqual([growth]);
    },
  );

  it('does not mistake another flag for one of those', () => {
    expect(
      gcFlags({ execArgv: ['--heap-growing', '--max-semi-space-size=8'], nodeOptions: '', cpus: 2 }),
    ).toEqual([growth, pretenuring]);
  });
});

describe('applyGcSettings', () => {
  it('sets each flag in V8', () => {
    setFlags.mockClear();
    expect(applyGcSettings({ execArgv: [], nodeOptions: '', cpus: 1 })).toHaveLength(3);
    expect(setFlags.mock.calls).toEqual([[growth], ['--no-concurrent-marking'], [pretenuring]]);
  });
});

describe('the flags', () => {
  it('are ones this Node knows (V8 ignores a flag it does not know, silently)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(options).toMatch(/^\s*--heap-growing-percent \(/m);
    expect(options).toMatch(/^\s*--concurrent-marking \(/m);
    expect(options).toMatch(/^\s*--allocation-site-pretenuring \(/m);
  });
});
