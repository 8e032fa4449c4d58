import { ConfigError, loadConfig } from '../config/app-config';
import { ApiKeysService } from './api-keys.service';
import { BOOTSTRAP_KEY_NAME, setUpKeys } from './key-setup';

const ENV_KEY = 'configured-key-0123456789';
const NEW_KEY = 'pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

type FakeApiKeys = { hasUsableManager: jest.Mock<Promise<boolean>, []>; create: jest.Mock };

function fakeApiKeys(hasUsableManager: boolean): FakeApiKeys {
  return {
    hasUsableManager: jest.fn(() => Promise.resolve(hasUsableManager)),
    create: jest.fn((name: string) =>
      Promise.resolve({
        key: NEW_KEY,
        record: {
          id: 1,
          name,
          prefix: NEW_KEY.slice(0, 12),
          keyHash: '0'.repeat(64),
          createdAt: 0,
          lastUsedAt: null,
          revokedAt: null,
        },
      }),
    ),
  };
}

function setUp(env: Record<string, string>, apiKeys: FakeApiKeys) {
  return setUpKeys(loadConfig(env), apiKeys as unknown as ApiKeysService);
}

describe('setUpKeys', () => {
  it('names the bootstrap key "bootstrap"', () => {
    expect(BOOTSTRAP_KEY_NAME).toBe('bootstrap');
  });

  it.each(['development', 'production'])(
    'uses the API_KEYS keys and creates no key (%s)',
    async (nodeEnv) => {
      const apiKeys = fakeApiKeys(false);

      await expect(setUp({ NODE_ENV: nodeEnv, API_KEYS: ENV_KEY }, apiKeys)).resolves.toEqual({
        source: 'environment',
      });
      expect(apiKeys.create).not.toHaveBeenCalled();
    },
  );

  it('reports the environment even when stored keys exist too', async () => {
    const apiKeys = fakeApiKeys(true);

    await expect(setUp({ API_KEYS: ENV_KEY }, apiKeys)).resolves.toEqual({ source: 'environment' });
    expect(apiKeys.create).not.toHaveBeenCalled();
  });

  it.each(['development', 'production'])(
    'uses the active stored keys and creates no key (%s)',
    async (nodeEnv) => {
      const apiKeys = fakeApiKeys(true);

      await expect(setUp({ NODE_ENV: nodeEnv }, apiKeys)).resolves.toEqual({ source: 'stored' });
      expect(apiKeys.hasUsableManager).toHaveBeenCalledTimes(1);
      expect(apiKeys.create).not.toHaveBeenCalled();
    },
  );

  it.each(['development', 'test', ''])(
    'creates a stored key named bootstrap and returns it once when there is none (NODE_ENV "%s")',
    async (nodeEnv) => {
      const apiKeys = fakeApiKeys(false);

      await expect(setUp({ NODE_ENV: nodeEnv }, apiKeys)).resolves.toEqual({
        source: 'generated',
        newKey: NEW_KEY,
      });
      expect(apiKeys.create).toHaveBeenCalledTimes(1);
      expect(apiKeys.create).toHaveBeenCalledWith('bootstrap');
    },
  );

  it('refuses to start in production without any key, and creates none', async () => {
    const apiKeys = fakeApiKeys(false);

    const result = setUp({ NODE_ENV: 'production' }, apiKeys);

    await expect(result).rejects.toBeInstanceOf(ConfigError);
    await expect(result).rejects.toThrow(/^no API key can manage keys: set API_KEYS or create one/);
    expect(apiKeys.create).not.toHaveBeenCalled();
  });

  it('passes a database failure on instead of generating a key', async () => {
    const apiKeys = fakeApiKeys(false);
    apiKeys.hasUsableManager.mockRejectedValueOnce(new Error('SQLITE_CANTOPEN'));

    await expect(setUp({}, apiKeys)).rejects.toThrow('SQLITE_CANTOPEN');
    expect(apiKeys.create).not.toHaveBeenCalled();
  });
});
