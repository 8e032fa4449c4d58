import { rmSync } from 'node:fs';
import { BUILD_VARIABLE } from './entry-points';

/** Removes the build of this run (test/support/global-setup.ts). */
export default function globalTeardown(): void {
  const build = process.env[BUILD_VARIABLE];
  if (build) rmSync(build, { recursive: true, force: true });
}
