import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestExpressApplication } from '@nestjs/platform-express';
import { loadConfig } from '../../src/config/app-config';
import { createApp, CreateAppOptions } from '../../src/setup-app';

export const TEST_KEY = 'test-key-0123456789abcdef';
export const AUTH = { Authorization: `Bearer ${TEST_KEY}` };

/**
 * Boots the real application, exactly as main.ts builds it (same config loader, same
 * createApp), on an in-memory SQLite database unless the environment says otherwise.
 * Logs are off (LOG_LEVEL=silent) unless the environment or the options ask for them.
 */
export async function startApp(
  env: Record<string, string> = {},
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  const config = loadConfig({ DATABASE_PATH: ':memory:', API_KEYS: TEST_KEY, LOG_LEVEL: 'silent', ...env });
  const app = await createApp(config, options);
  await app.init();
  return app;
}

/** A fresh temporary folder, removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'petstore-test-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
