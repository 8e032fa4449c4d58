import type { Config } from '@jest/types';
import { BUILD_VARIABLE, buildEntryPoints } from './entry-points';
import { createTestDatabase } from './postgres';

/**
 * Once per run, before any test file (its environment reaches every test worker): colours
 * off when the output is not a terminal, and, unless `npm run test:quick` (which starts no
 * child process and no PostgreSQL test), src/ compiled for the child processes; last, this
 * run's PostgreSQL database (under TEST_DATABASE_URL in the quick run too), which
 * test/support/global-teardown.ts drops.
 */
export default async function globalSetup(
  _globalConfig: Config.GlobalConfig,
  projectConfig: Config.ProjectConfig,
): Promise<void> {
  // Nest's logger colours its lines whatever it writes to, unless NO_COLOR is set.
  if (!process.stdout.isTTY && !process.env.FORCE_COLOR) process.env.NO_COLOR ??= '1';
  if (!process.env.TEST_QUICK) process.env[BUILD_VARIABLE] = buildEntryPoints(projectConfig.cacheDirectory);
  if (!process.env.TEST_QUICK || process.env.TEST_DATABASE_URL) await createTestDatabase();
}
