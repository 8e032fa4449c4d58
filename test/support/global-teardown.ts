import { rmSync } from 'node:fs';
import { BUILD_VARIABLE } from './entry-points';
import { dropTestDatabase } from './postgres';

/** Removes the build and drops the PostgreSQL database of this run (test/support/global-setup.ts). */
export default async function globalTeardown(): Promise<void> {
  const build = process.env[BUILD_VARIABLE];
  if (build) rmSync(build, { recursive: true, force: true });
  await dropTestDatabase();
}
