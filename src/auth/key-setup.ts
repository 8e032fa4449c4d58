import { AppConfig, ConfigError } from '../config/app-config';
import { ApiKeysService } from './api-keys.service';

export type KeySource = 'environment' | 'stored' | 'generated';

/** Where this instance's valid keys come from; `newKey` is set only on the start that made it. */
export interface KeySetup {
  source: KeySource;
  newKey?: string;
}

export const BOOTSTRAP_KEY_NAME = 'bootstrap';

/**
 * The service never starts open. `API_KEYS` keys are accepted beside stored keys; with neither,
 * a first start outside production stores a key named `bootstrap` and shows it once. In
 * production a deployment must bring its keys, so it refuses to start instead.
 */
export async function setUpKeys(config: AppConfig, apiKeys: ApiKeysService): Promise<KeySetup> {
  if (config.apiKeys.length > 0) return { source: 'environment' };
  if (await apiKeys.hasActiveKeys()) return { source: 'stored' };
  if (config.nodeEnv === 'production') {
    throw new ConfigError(
      'no API keys: set API_KEYS or create one with `npm run apikey -- create --name <client>` (production never generates a bootstrap key)',
    );
  }
  const { key } = await apiKeys.create(BOOTSTRAP_KEY_NAME);
  return { source: 'generated', newKey: key };
}
