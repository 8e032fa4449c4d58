import { existsSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * `describe` when Chromium is there or CI is set (in CI a missing browser is a failure, not a
 * skip), else `describe.skip` with a message saying how to get it.
 */
export function describeInBrowser(what: string): jest.Describe {
  const available = existsSync(CHROMIUM);
  if (!available && !process.env.CI) {
    console.warn(`Skipping ${what}: no ${CHROMIUM}. Install it with: apt-get install -y chromium`);
  }
  return available || process.env.CI ? describe : describe.skip;
}

/**
 * Headless Chromium as this machine allows it: no sandbox (root), and none of its background
 * connections, which the closed network would refuse many times over.
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
