import { AppConfig, ConfigError } from '../config/app-config';
import { ApiKeysService } from './api-keys.service';

export interface KeySetup {
  source: 'environment' | 'stored' | 'generated';
  newKey?: string;
}

export const BOOTSTRAP_KEY_NAME = 'bootstrap';

/** Never starts open: without keys, production refuses to start rather than generate one. */
export async function setUpKeys(
  config: Pick<AppConfig, 'auth' | 'nodeEnv'>,
  apiKeys: ApiKeysService,
): Promise<KeySetup> {
  if (config.auth.apiKeys.length > 0) return { source: 'environment' };
  if (await apiKeys.hasActiveKeys()) return { source: 'stored' };
  if (config.nodeEnv === 'production') {
    throw new ConfigError([
      'no API keys: set API_KEYS or create one with `npm run apikey -- create --name <client>` (production never generates a bootstrap key)',
    ]);
  }
  const { key } = await apiKeys.create(BOOTSTRAP_KEY_NAME);
  return { source: 'generated', newKey: key };
}
