import childProcess from 'node:child_process';
import { TestEnvironment } from 'jest-environment-node';

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

/**
 * Node's test environment; under `npm run test:quick` an e2e spec that starts a child process
 * fails with a message saying why, instead of making the quick run slow or dependent on the
 * machine (jest.config.js says which specs the quick run leaves out). Node's module is shared
 * by the specs a worker runs, the unit specs too, so it is put back after each spec.
 */
export default class E2eEnvironment extends TestEnvironment {
  private readonly originals = new Map<string, unknown>();

  override async setup(): Promise<void> {
    await super.setup();
    if (!process.env.TEST_QUICK) return;
    for (const name of STARTERS) {
      this.originals.set(name, childProcess[name]);
      Object.defineProperty(childProcess, name, {
        configurable: true,
        writable: true,
        value: () => {
          throw new Error(
            `test:quick runs only e2e specs that start no process, but this one called child_process.${name}: ` +
              'start it through node:child_process, playwright-core or test/support/{process,browser,servers}.ts, ' +
              'imported by the spec or its helpers, so that test:quick leaves the spec out (jest.config.js)',
          );
        },
      });
    }
  }

  override async teardown(): Promise<void> {
    for (const [name, original] of this.originals)
      Object.defineProperty(childProcess, name, { configurable: true, writable: true, value: original });
    this.originals.clear();
    await super.teardown();
  }
}
