import { join, resolve } from 'node:path';
import { AppConfig, ConfigError, describeDatabase, durationsMs, loadConfig } from './app-config';

/** The error `loadConfig(env)` throws, or a failure if it throws nothing. */
function configError(env: Record<string, string | undefined>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('loadConfig did not throw');
}

describe('loadConfig', () => {
  it('uses the defaults for an empty environment', () => {
    const expected: AppConfig = {
      nodeEnv: 'development',
      http: {
        port: 3000,
        host: '0.0.0.0',
        corsOrigins: [],
        trustProxy: false,
        headersTimeoutMs: 15000,
        requestTimeoutMs: 30000,
        idleTimeoutMs: 30000,
        maxPipelined: 16,
        maxConnections: 0,
        bodyLimitBytes: 16384,
      },
      shutdown: { drainMs: 5000, timeoutMs: 10000 },
      database: {
        path: resolve('data', 'petstore.sqlite'),
        url: null,
        schema: 'public',
        poolSize: 10,
        connectTimeoutMs: 5000,
        statementTimeoutMs: 15000,
        outageWaitMs: 2000,
        outageMaxWaiting: 200,
        sqliteSynchronous: 'FULL',
        sqliteBusyTimeoutMs: 5000,
        readCacheSize: 20000,
        readCacheMegabytes: 16,
        readCacheStaleMs: 1000,
      },
      rateLimit: { enabled: true, perMinute: 600, authFailuresPerMinute: 30, redisUrl: null },
      auth: { apiKeys: [], maxLifetimeDays: null, oidcIssuer: null, oidcAudience: null, oidcScopePrefix: '' },
      audit: { retentionDays: 180 },
      events: {
        retentionDays: 30,
        natsUrl: null,
        allowHttp: false,
        allowPrivateNetworks: false,
        retrySchedule: '5s,5m,30m,2h,5h,10h,10h',
        concurrency: 64,
        pollMs: 1000,
      },
      docs: {
        swaggerEnabled: true,
        productionBaseUrl: 'https://api.petstore.example.com/v1',
        stagingBaseUrl: 'https://staging-api.petstore.example.com/v1',
      },
      log: { level: 'info' },
      metrics: { port: null, host: '127.0.0.1', ownListener: true },
      process: { role: 'all', healthPort: 8081 },
    };

    expect(loadConfig({})).toEqual(expected);
  });

  it('treats empty strings as unset', () => {
    expect(
      loadConfig({
        NODE_ENV: '',
        PORT: '',
        HOST: '',
        DATABASE_PATH: '',
        SQLITE_SYNCHRONOUS: '',
        SQLITE_BUSY_TIMEOUT_MS: '',
        API_KEYS: '  ',
        PRODUCTION_BASE_URL: '',
        STAGING_BASE_URL: '',
        LOG_LEVEL: '',
        CORS_ORIGINS: ' , ',
        TRUST_PROXY: '',
        SHUTDOWN_TIMEOUT_MS: '',
        SWAGGER_ENABLED: '',
      }),
    ).toEqual(loadConfig({}));
  });

  it('reads every setting from the environment', () => {
    const databasePath = join(resolve('/'), 'srv', 'petstore', 'pets.sqlite');

    expect(
      loadConfig({
        NODE_ENV: 'production',
        PORT: '8080',
        HOST: '127.0.0.1',
        DATABASE_PATH: databasePath,
        SQLITE_SYNCHRONOUS: 'normal',
        SQLITE_BUSY_TIMEOUT_MS: '250',
        API_KEYS: ' key-one-0123456789abcdef , key_two.0123456789~+/= ,',
        PRODUCTION_BASE_URL: 'https://api.example.org/v1/',
        STAGING_BASE_URL: 'http://staging.example.org:8080/v1',
        DATABASE_URL: 'postgres://app:secret@db.internal:5433/pets',
        DATABASE_SCHEMA: 'petstore',
        DB_POOL_SIZE: '20',
        DB_CONNECT_TIMEOUT_MS: '2000',
        DB_STATEMENT_TIMEOUT_MS: '3000',
        RATE_LIMIT_ENABLED: 'false',
        RATE_LIMIT_PER_MINUTE: '100',
        AUTH_FAILURES_PER_MINUTE: '5',
        REDIS_URL: 'redis://127.0.0.1:6379/2',
        READ_CACHE_SIZE: '0',
        READ_CACHE_MB: '64',
        LOG_LEVEL: 'WARN',
        CORS_ORIGINS: 'https://app.example.org, http://localhost:5173/',
        TRUST_PROXY: '10.0.0.0/8, loopback',
        SHUTDOWN_TIMEOUT_MS: '25000',
        SWAGGER_ENABLED: 'false',
        METRICS_PORT: '9464',
        METRICS_HOST: '0.0.0.0',
        EVENTS_RETENTION_DAYS: '45',
        EVENTS_NATS_URL: 'nats://127.0.0.1:4222',
        WEBHOOK_ALLOW_HTTP: 'TRUE',
        WEBHOOK_RETRY_SCHEDULE: '500ms, 2s,1m,1h',
        WEBHOOK_CONCURRENCY: '4',
        PROCESS_ROLE: 'Worker',
        HEALTH_PORT: '9000',
      }),
    ).toEqual({
      nodeEnv: 'production',
      process: { role: 'worker', healthPort: 9000 },
      http: {
        port: 8080,
        host: '127.0.0.1',
        corsOrigins: ['https://app.example.org', 'http://localhost:5173'],
        trustProxy: ['10.0.0.0/8', 'loopback'],
        headersTimeoutMs: 15000,
        requestTimeoutMs: 30000,
        idleTimeoutMs: 30000,
        maxPipelined: 16,
        maxConnections: 0,
        bodyLimitBytes: 16384,
      },
      shutdown: { drainMs: 5000, timeoutMs: 25000 },
      database: {
        path: databasePath,
        url: 'postgres://app:secret@db.internal:5433/pets',
        schema: 'petstore',
        poolSize: 20,
        connectTimeoutMs: 2000,
        statementTimeoutMs: 3000,
        outageWaitMs: 2000,
        outageMaxWaiting: 200,
        sqliteSynchronous: 'NORMAL',
        sqliteBusyTimeoutMs: 250,
        readCacheSize: 0,
        readCacheMegabytes: 64,
        readCacheStaleMs: 1000,
      },
      rateLimit: {
        enabled: false,
        perMinute: 100,
        authFailuresPerMinute: 5,
        redisUrl: 'redis://127.0.0.1:6379/2',
      },
      auth: {
        apiKeys: ['key-one-0123456789abcdef', 'key_two.0123456789~+/='],
        maxLifetimeDays: null,
        oidcIssuer: null,
        oidcAudience: null,
        oidcScopePrefix: '',
      },
      audit: { retentionDays: 180 },
      events: {
        retentionDays: 45,
        natsUrl: 'nats://127.0.0.1:4222',
        allowHttp: true,
        allowPrivateNetworks: false,
        retrySchedule: '500ms, 2s,1m,1h',
        concurrency: 4,
        pollMs: 200,
      },
      docs: {
        swaggerEnabled: false,
        productionBaseUrl: 'https://api.example.org/v1',
        stagingBaseUrl: 'http://staging.example.org:8080/v1',
      },
      log: { level: 'warn' },
      // A worker serves its metrics beside its probes, whatever METRICS_PORT says.
      metrics: { port: 9000, host: '0.0.0.0', ownListener: false },
    });
  });

  describe('PostgreSQL', () => {
    it('builds the URL from DB_TYPE=postgres and its parts, escaping them', () => {
      const config = loadConfig({
        DB_TYPE: 'postgres',
        DB_HOST: 'db.internal',
        DB_PORT: '6543',
        DB_USER: 'pet store',
        DB_PASSWORD: 'p@ss/word',
        DB_NAME: 'pets',
      });
      expect(config.database.url).toBe('postgres://pet%20store:p%40ss%2Fword@db.internal:6543/pets');
    });

    it('stays on SQLite without DATABASE_URL or DB_TYPE=postgres', () => {
      expect(loadConfig({ DB_TYPE: 'sqlite' }).database.url).toBeNull();
    });

    it('reads DB_TYPE in any case, with the defaults of the parts', () => {
      expect(loadConfig({ DB_TYPE: 'Postgres' }).database.url).toBe(
        'postgres://postgres@localhost:5432/petstore',
      );
      expect(loadConfig({ DB_TYPE: 'SQLITE' }).database.url).toBeNull();
    });

    it('checks DB_PORT only when it builds the URL (service links set DB_PORT=tcp://...)', () => {
      const serviceLink = 'tcp://10.0.0.5:5432';

      expect(loadConfig({ DB_PORT: serviceLink }).database.url).toBeNull();
      expect(loadConfig({ DB_PORT: serviceLink, DATABASE_URL: 'postgres://db/pets' }).database.url).toBe(
        'postgres://db/pets',
      );
      expect(configError({ DB_PORT: serviceLink, DB_TYPE: 'postgres' }).message).toBe(
        `DB_PORT must be an integer from 1 to 65535 (got "${serviceLink}")`,
      );
    });

    it('reports a bad DB_TYPE and a bad DATABASE_URL together', () => {
      expect(configError({ DB_TYPE: 'oracle', DATABASE_URL: 'mysql://u:secret@h/d' }).problems).toEqual([
        'DB_TYPE must be sqlite or postgres (got "oracle")',
        'DATABASE_URL must start with postgres:// or postgresql://',
      ]);
    });

    it.each([
      [
        { DATABASE_URL: 'mysql://root:secret@db/pets' },
        'DATABASE_URL must start with postgres:// or postgresql://',
      ],
      [
        { DATABASE_URL: 'not a url with secret' },
        'DATABASE_URL must be a URL like postgres://user:password@host:5432/database',
      ],
      [
        { DATABASE_URL: 'postgres://u:secret@h/d', DB_TYPE: 'sqlite' },
        'DATABASE_URL is set but DB_TYPE is sqlite: unset one of them',
      ],
      [{ DB_TYPE: 'oracle' }, 'DB_TYPE must be sqlite or postgres (got "oracle")'],
      [
        { DATABASE_SCHEMA: 'Bad-Schema' },
        'DATABASE_SCHEMA must be a lower-case SQL identifier (got "Bad-Schema")',
      ],
      [{ DB_POOL_SIZE: '1' }, 'DB_POOL_SIZE must be an integer from 2 to 1000 (got "1")'],
      [{ REDIS_URL: 'http://secret@redis' }, 'REDIS_URL must be a URL like redis://127.0.0.1:6379'],
      [{ RATE_LIMIT_ENABLED: 'maybe' }, 'RATE_LIMIT_ENABLED must be true or false (got "maybe")'],
      [
        { RATE_LIMIT_PER_MINUTE: '0' },
        'RATE_LIMIT_PER_MINUTE must be an integer from 1 to 10000000 (got "0")',
      ],
    ])('rejects %o in one line that never shows the password', (env, message) => {
      const error = configError(env);
      expect(error.message).toBe(message);
      expect(error.message).not.toContain('secret');
    });

    it('describes the database without its password', () => {
      const config = loadConfig({ DATABASE_URL: 'postgres://app:secret@db.internal:5433/pets' });
      expect(describeDatabase(config.database)).toBe(
        'postgres://app:***@db.internal:5433/pets (PostgreSQL, schema public)',
      );
    });
  });

  describe('PORT', () => {
    it.each(['0', '65535'])('accepts %s', (port) => {
      expect(loadConfig({ PORT: port }).http.port).toBe(Number(port));
    });

    it.each(['65536', '-1', '80.5', 'abc', ' 80', '0x50', '1e3'])(
      'rejects "%s" in one clear line',
      (port) => {
        const error = configError({ PORT: port });
        expect(error.name).toBe('ConfigError');
        expect(error.message).toBe(`PORT must be an integer from 0 to 65535 (got "${port}")`);
      },
    );
  });

  describe('SQLITE_BUSY_TIMEOUT_MS', () => {
    it('rejects a value above the maximum', () => {
      expect(configError({ SQLITE_BUSY_TIMEOUT_MS: '600001' }).message).toBe(
        'SQLITE_BUSY_TIMEOUT_MS must be an integer from 0 to 600000 (got "600001")',
      );
    });
  });

  describe('WEBHOOK_RETRY_SCHEDULE and EVENTS_NATS_URL', () => {
    it.each(['5 s', '5x', '1.5s', '-1s', '1d'])('rejects the schedule "%s", quoting it', (raw) => {
      expect(configError({ WEBHOOK_RETRY_SCHEDULE: raw }).message).toBe(
        `WEBHOOK_RETRY_SCHEDULE must be 1 to 20 durations like 5s,5m,2h (ms, s, m or h), comma-separated (got "${raw}")`,
      );
    });

    it('reads the schedule in ms', () => {
      expect(durationsMs('500ms, 2s,1m,1h')).toEqual([500, 2000, 60_000, 3_600_000]);
    });

    it('refuses a NATS URL of another scheme without quoting it', () => {
      expect(configError({ EVENTS_NATS_URL: 'http://user:secret@nats' }).message).toBe(
        'EVENTS_NATS_URL must be one or more URLs like nats://127.0.0.1:4222, comma-separated',
      );
    });
  });

  describe('SQLITE_SYNCHRONOUS', () => {
    it.each([
      ['FULL', 'FULL'],
      ['full', 'FULL'],
      ['NORMAL', 'NORMAL'],
      ['Normal', 'NORMAL'],
    ])('accepts %s as %s', (raw, expected) => {
      expect(loadConfig({ SQLITE_SYNCHRONOUS: raw }).database.sqliteSynchronous).toBe(expected);
    });

    it.each(['OFF', 'EXTRA', '2', ' FULL'])('rejects "%s"', (raw) => {
      expect(configError({ SQLITE_SYNCHRONOUS: raw }).message).toBe(
        `SQLITE_SYNCHRONOUS must be one of FULL, NORMAL (got "${raw}")`,
      );
    });
  });

  describe('base URLs', () => {
    it.each(['PRODUCTION_BASE_URL', 'STAGING_BASE_URL'] as const)(
      'strips trailing slashes from %s',
      (name) => {
        const config = loadConfig({ [name]: 'https://example.org/v1//' });
        expect(
          name === 'PRODUCTION_BASE_URL' ? config.docs.productionBaseUrl : config.docs.stagingBaseUrl,
        ).toBe('https://example.org/v1');
      },
    );

    it.each([
      ['PRODUCTION_BASE_URL', 'api.example.org/v1'],
      ['PRODUCTION_BASE_URL', '/v1'],
      ['PRODUCTION_BASE_URL', 'ftp://example.org/v1'],
      ['STAGING_BASE_URL', 'not a url'],
      ['STAGING_BASE_URL', 'javascript:alert(1)'],
      ['STAGING_BASE_URL', 'file:///etc/passwd'],
    ])('rejects %s=%s', (name, raw) => {
      expect(configError({ [name]: raw }).message).toBe(
        `${name} must be an absolute http(s) URL (got "${raw}")`,
      );
    });
  });

  describe('HOST', () => {
    it.each(['localhost', '::1', '[::1]', '10.0.0.1', 'api-host.internal'])('accepts %s', (host) => {
      expect(loadConfig({ HOST: host }).http.host).toBe(host);
    });

    it('rejects a value that is not a host name or address', () => {
      expect(configError({ HOST: 'exa mple' }).message).toBe(
        'HOST must be a host name or IP address (got "exa mple")',
      );
    });
  });

  describe('API_KEYS', () => {
    const good = 'Valid-Key_0123456789';

    it.each([
      ['too short', 'sekrit0123456'],
      ['15 characters', 'abcdefghijklmno'],
      ['a space inside', 'secret key 0123456789'],
      ['a forbidden character', 'secret$key0123456789'],
      ['padding in the middle', 'secret=key0123456789'],
      ['non-ASCII', 'sécretkey0123456789'],
    ])('rejects a key with %s, naming its position but never the key', (_label, key) => {
      const error = configError({ API_KEYS: `${good},${key}` });

      expect(error.message).toBe(
        'API_KEYS entry 2 is not a valid key: use at least 16 characters of A-Z a-z 0-9 - . _ ~ + /',
      );
      expect(error.message).not.toContain(key);
      expect(error.stack ?? '').not.toContain(key);
    });

    it('accepts exactly 16 characters and trailing padding', () => {
      expect(loadConfig({ API_KEYS: 'abcdefghijklmnop,abcdefghijklmnop==' }).auth.apiKeys).toEqual([
        'abcdefghijklmnop',
        'abcdefghijklmnop==',
      ]);
    });

    it('ignores empty entries', () => {
      expect(loadConfig({ API_KEYS: `,${good},,` }).auth.apiKeys).toEqual([good]);
    });
  });

  describe('DATABASE_PATH', () => {
    it('keeps :memory:', () => {
      expect(loadConfig({ DATABASE_PATH: ':memory:' }).database.path).toBe(':memory:');
    });

    it('resolves a relative path against the working directory', () => {
      expect(loadConfig({ DATABASE_PATH: 'var/db/pets.sqlite' }).database.path).toBe(
        resolve(process.cwd(), 'var', 'db', 'pets.sqlite'),
      );
    });

    it('keeps an absolute path as given', () => {
      const absolute = join(resolve('/'), 'tmp', 'pets.sqlite');

      expect(loadConfig({ DATABASE_PATH: absolute }).database.path).toBe(absolute);
    });

    it('rejects a path holding a NUL character', () => {
      expect(configError({ DATABASE_PATH: 'pets\0.sqlite' }).message).toBe(
        'DATABASE_PATH must be a file path or :memory:',
      );
    });
  });

  describe('LOG_LEVEL', () => {
    it.each(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', 'Debug'])(
      'accepts %s',
      (level) => {
        expect(loadConfig({ LOG_LEVEL: level }).log.level).toBe(level.toLowerCase());
      },
    );

    it.each(['verbose', 'log', '30', ' info'])('rejects "%s"', (level) => {
      expect(configError({ LOG_LEVEL: level }).message).toBe(
        `LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "${level}")`,
      );
    });
  });

  describe('CORS_ORIGINS', () => {
    it('keeps each origin in the form browsers send it', () => {
      expect(
        loadConfig({ CORS_ORIGINS: 'HTTPS://App.Example.org:443,http://[::1]:8080' }).http.corsOrigins,
      ).toEqual(['https://app.example.org', 'http://[::1]:8080']);
    });

    it.each([
      '*',
      'app.example.org',
      'https://app.example.org/path',
      'https://app.example.org?x=1',
      'https://user:pass@app.example.org',
      'ftp://app.example.org',
      'null',
    ])('rejects %s, naming its position', (origin) => {
      expect(configError({ CORS_ORIGINS: `https://ok.example.org,${origin}` }).message).toBe(
        `CORS_ORIGINS entry 2 must be an origin such as https://app.example.com (got "${origin}")`,
      );
    });
  });

  describe('TRUST_PROXY', () => {
    it.each([
      ['false', false],
      ['FALSE', false],
      ['true', true],
      ['True', true],
      ['1', 1],
      ['2', 2],
      ['loopback', ['loopback']],
      ['loopback, linklocal,uniquelocal', ['loopback', 'linklocal', 'uniquelocal']],
      ['10.0.0.1', ['10.0.0.1']],
      ['10.0.0.0/8,192.168.0.0/255.255.0.0', ['10.0.0.0/8', '192.168.0.0/255.255.0.0']],
      ['fd00::/8', ['fd00::/8']],
    ])('reads %s as Express does', (raw, expected) => {
      expect(loadConfig({ TRUST_PROXY: raw }).http.trustProxy).toEqual(expected);
    });

    it.each(['yes', '10.0.0.0/33', '300.1.1.1', 'proxy.internal', '-1', '1.5'])('rejects "%s"', (raw) => {
      expect(configError({ TRUST_PROXY: raw }).message).toBe(
        `TRUST_PROXY must be true, false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal, uniquelocal (got "${raw}")`,
      );
    });
  });

  describe('SHUTDOWN_TIMEOUT_MS', () => {
    it.each(['-1', '600001', '5s'])('rejects "%s"', (raw) => {
      expect(configError({ SHUTDOWN_TIMEOUT_MS: raw }).message).toBe(
        `SHUTDOWN_TIMEOUT_MS must be an integer from 0 to 600000 (got "${raw}")`,
      );
    });
  });

  describe.each([
    ['SWAGGER_ENABLED', (config: AppConfig) => config.docs.swaggerEnabled],
    ['RATE_LIMIT_ENABLED', (config: AppConfig) => config.rateLimit.enabled],
  ] as const)('%s (the one boolean syntax of every flag)', (name, flag) => {
    it.each([
      ['true', true],
      ['TRUE', true],
      ['false', false],
      ['False', false],
    ])('reads %s', (raw, expected) => {
      expect(flag(loadConfig({ [name]: raw }))).toBe(expected);
    });

    it.each(['0', '1', 'no', 'yes', 'off', 'on'])('rejects "%s"', (raw) => {
      expect(configError({ [name]: raw }).message).toBe(`${name} must be true or false (got "${raw}")`);
    });
  });

  describe('NODE_ENV', () => {
    it.each(['development', 'production', 'test'])('reads %s', (raw) => {
      expect(loadConfig({ NODE_ENV: raw }).nodeEnv).toBe(raw);
    });

    it.each(['prod', 'Production', 'staging', 'dev'])('refuses "%s"', (raw) => {
      expect(configError({ NODE_ENV: raw }).message).toBe(
        `NODE_ENV must be one of development, production, test (got "${raw}")`,
      );
    });
  });

  describe('AUTH_FAILURES_PER_MINUTE', () => {
    it.each(['0', '-1', 'many'])('refuses "%s"', (raw) => {
      expect(configError({ AUTH_FAILURES_PER_MINUTE: raw }).message).toBe(
        `AUTH_FAILURES_PER_MINUTE must be an integer from 1 to 10000000 (got "${raw}")`,
      );
    });
  });

  it('reports every problem at once, one line each, in a fixed order', () => {
    const error = configError({ NODE_ENV: 'prod', PORT: 'http', LOG_LEVEL: 'loud', SWAGGER_ENABLED: 'yes' });

    expect(error.problems).toEqual([
      'NODE_ENV must be one of development, production, test (got "prod")',
      'PORT must be an integer from 0 to 65535 (got "http")',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      'SWAGGER_ENABLED must be true or false (got "yes")',
    ]);
    expect(error.message.split('\n')).toEqual(error.problems);
  });

  it('never prints a secret value among the problems', () => {
    const error = configError({
      API_KEYS: 'short-secret',
      DATABASE_URL: 'mysql://user:hunter2@db/pets',
      PORT: 'x',
    });

    expect(error.problems).toHaveLength(3);
    expect(error.message).not.toMatch(/short-secret|hunter2/);
  });
  describe('METRICS_PORT and METRICS_HOST', () => {
    it('keeps metrics off unless METRICS_PORT is set; 0 takes any free port', () => {
      expect(loadConfig({ METRICS_PORT: '' }).metrics.port).toBeNull();
      expect(loadConfig({ METRICS_PORT: '0' }).metrics.port).toBe(0);
    });

    it.each(['-1', '65536', 'on'])('rejects METRICS_PORT "%s"', (raw) => {
      expect(configError({ METRICS_PORT: raw }).message).toBe(
        `METRICS_PORT must be an integer from 0 to 65535 (got "${raw}")`,
      );
    });

    it("refuses the API's own port", () => {
      expect(configError({ METRICS_PORT: '3000' }).message).toBe(
        'METRICS_PORT must differ from PORT (both 3000): metrics have their own listener',
      );
      expect(loadConfig({ PORT: '8080', METRICS_PORT: '3000' }).metrics.port).toBe(3000);
    });

    it('rejects a METRICS_HOST that is no host', () => {
      expect(configError({ METRICS_HOST: 'local host' }).message).toBe(
        'METRICS_HOST must be a host name or IP address (got "local host")',
      );
    });
  });

  describe('PROCESS_ROLE', () => {
    it('is all by default, and one of all, api or worker', () => {
      expect(loadConfig({}).process.role).toBe('all');
      expect(loadConfig({ PROCESS_ROLE: 'API' }).process.role).toBe('api');
      expect(configError({ PROCESS_ROLE: 'sender' }).message).toBe(
        'PROCESS_ROLE must be one of all, api, worker (got "sender")',
      );
    });

    it('refuses an api or a worker on :memory:, which no other process can open', () => {
      for (const role of ['api', 'worker'])
        expect(configError({ PROCESS_ROLE: role, DATABASE_PATH: ':memory:' }).message).toMatch(
          new RegExp(`^PROCESS_ROLE=${role} needs a database that the other role's processes can open`),
        );
      const postgres = {
        PROCESS_ROLE: 'worker',
        DATABASE_PATH: ':memory:',
        DATABASE_URL: 'postgres://db/pets',
      };
      expect(loadConfig(postgres).process.role).toBe('worker');
    });

    it("lets a worker's METRICS_PORT be its PORT: it opens neither", () => {
      expect(loadConfig({ PROCESS_ROLE: 'worker', PORT: '3000', METRICS_PORT: '3000' }).metrics.port).toBe(
        8081,
      );
    });
  });
});
