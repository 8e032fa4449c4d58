import { AppConfig, ConfigError } from '../config/app-config';
import { ApiKeysService } from './api-keys.service';

export interface KeySetup {
  source: 'environment' | 'stored' | 'generated';
  newKey?: string;
}

export const BOOTSTRAP_KEY_NAME = 'bootstrap';

/** Never starts open, never locked out: without a key that can manage keys, production refuses to start rather than generate one. */
export async function setUpKeys(
  config: Pick<AppConfig, 'auth' | 'nodeEnv'>,
  apiKeys: ApiKeysService,
): Promise<KeySetup> {
  if (config.auth.apiKeys.length > 0) return { source: 'environment' };
  if (await apiKeys.hasUsableManager()) return { source: 'stored' };
  if (config.nodeEnv === 'production')
    throw new ConfigError([
      'no API key can manage keys: set API_KEYS or create one with `npm run apikey -- create --name <admin>` (production never generates a bootstrap key)',
    ]);
  const { key } = await apiKeys.create(BOOTSTRAP_KEY_NAME);
  return { source: 'generated', newKey: key };
}
