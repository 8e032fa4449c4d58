import { plainToInstance, Transform } from 'class-transformer';
import { Allow, IsOptional, Matches, ValidateIf, validateSync } from 'class-validator';
import { isAbsolute, resolve } from 'node:path';
import proxyAddr from 'proxy-addr';
import { isWellFormedApiKey, MIN_API_KEY_LENGTH } from '../common/validation/api-key-format';
import {
  CommaSeparated,
  declaredProperties,
  Flag,
  got,
  Integer,
  list,
  Matching,
  OneOf,
  Satisfies,
} from './environment.rules';

const SQLITE_SYNCHRONOUS_MODES = ['FULL', 'NORMAL'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS_MODES)[number];

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Express's `trust proxy`: off, on, a number of hops, or the trusted addresses. */
export type TrustProxy = boolean | number | string[];

/** Read once from the environment at start (docs/configuration.md); only this folder reads `process.env`. */
export type AppConfig = Readonly<ReturnType<typeof appConfigFrom>>;

export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('\n'));
    this.name = 'ConfigError';
    this.problems = list;
  }
}

const HOST_NAME = /^[A-Za-z0-9.:\-[\]]+$/;
const HOST_RULE = 'must be a host name or IP address';

/**
 * Every variable with its rule and default; empty counts as unset. A problem quotes the value,
 * except for secrets: API_KEYS, DB_PASSWORD, and the URLs that may hold a password.
 */
export class EnvironmentVariables {
  @OneOf(NODE_ENVS)
  NODE_ENV: NodeEnv = 'development';

  @Integer(0, 65535)
  PORT = 3000;

  @Matching(HOST_NAME, HOST_RULE)
  HOST = '0.0.0.0';

  @Matches(/^[^\0]*$/, { message: 'DATABASE_PATH must be a file path or :memory:' })
  DATABASE_PATH = './data/petstore.sqlite';

  @IsOptional()
  @OneOf(['sqlite', 'postgres'], { ignoreCase: true, rule: 'must be sqlite or postgres' })
  DB_TYPE?: 'sqlite' | 'postgres';

  @IsOptional()
  @Satisfies(postgresUrlProblem)
  DATABASE_URL?: string;

  @Allow()
  DB_HOST = 'localhost';

  // Checked only when used: Kubernetes and Docker links set it to `tcp://...` beside a service `db`.
  @ValidateIf(buildsPostgresUrl)
  @Integer(1, 65535)
  DB_PORT = 5432;

  @Allow()
  DB_USER = 'postgres';

  @Allow()
  DB_PASSWORD = '';

  @Allow()
  DB_NAME = 'petstore';

  @Matching(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
  DATABASE_SCHEMA = 'public';

  @Integer(2, 1000)
  DB_POOL_SIZE = 10;

  @Integer(100, 600000)
  DB_CONNECT_TIMEOUT_MS = 5000;

  @Integer(100, 3600000)
  DB_STATEMENT_TIMEOUT_MS = 15000;

  @Integer(0, 60000)
  DB_OUTAGE_WAIT_MS = 2000;

  @Integer(0, 100000)
  DB_OUTAGE_MAX_WAITING = 200;

  @Flag()
  RATE_LIMIT_ENABLED = true;

  @Integer(1, 10_000_000)
  RATE_LIMIT_PER_MINUTE = 600;

  @Integer(1, 10_000_000)
  AUTH_FAILURES_PER_MINUTE = 30;

  @IsOptional()
  @Satisfies(redisUrlProblem)
  REDIS_URL?: string;

  @Integer(0, 10_000_000)
  READ_CACHE_SIZE = 20000;

  @Integer(1, 4096)
  READ_CACHE_MB = 16;

  @Integer(100, 60000)
  READ_CACHE_STALE_MS = 1000;

  @OneOf(SQLITE_SYNCHRONOUS_MODES, { ignoreCase: true })
  SQLITE_SYNCHRONOUS: SqliteSynchronous = 'FULL';

  @Integer(0, 600000)
  SQLITE_BUSY_TIMEOUT_MS = 5000;

  @CommaSeparated()
  @Satisfies(apiKeysProblem)
  API_KEYS: string[] = [];

  @Satisfies(httpUrlProblem)
  PRODUCTION_BASE_URL = 'https://api.petstore.example.com/v1';

  @Satisfies(httpUrlProblem)
  STAGING_BASE_URL = 'https://staging-api.petstore.example.com/v1';

  @OneOf(LOG_LEVELS, { ignoreCase: true })
  LOG_LEVEL: LogLevel = 'info';

  @CommaSeparated()
  @Satisfies(corsOriginsProblem)
  CORS_ORIGINS: string[] = [];

  @Transform(parseTrustProxy)
  @Satisfies(trustProxyProblem)
  TRUST_PROXY: TrustProxy = false;

  @Integer(0, 600000)
  SHUTDOWN_TIMEOUT_MS = 10000;

  @Integer(1000, 600000)
  HTTP_HEADERS_TIMEOUT_MS = 15000;

  @Integer(1000, 3600000)
  HTTP_REQUEST_TIMEOUT_MS = 30000;

  @Integer(1000, 3600000)
  HTTP_IDLE_TIMEOUT_MS = 30000;

  @Integer(1, 1000)
  HTTP_MAX_PIPELINED = 16;

  @Integer(0, 1000000)
  HTTP_MAX_CONNECTIONS = 0;

  @Integer(0, 600000)
  SHUTDOWN_DRAIN_MS = 5000;

  @Flag()
  SWAGGER_ENABLED = true;

  /** Unset: no metrics are kept at all; 0 takes any free port. */
  @IsOptional()
  @Integer(0, 65535)
  @Satisfies(metricsPortProblem)
  METRICS_PORT?: number;

  @Matching(HOST_NAME, HOST_RULE)
  METRICS_HOST = '127.0.0.1';
}

export const ENVIRONMENT_VARIABLES: readonly string[] = declaredProperties(EnvironmentVariables);

type Env = Record<string, string | undefined>;

/** The configuration of an environment, or one ConfigError naming every problem found. */
export function loadConfig(env: Env): AppConfig {
  const given = ENVIRONMENT_VARIABLES.filter((name) => env[name] !== undefined && env[name] !== '').map(
    (name) => [name, env[name]],
  );
  const variables = plainToInstance(EnvironmentVariables, Object.fromEntries(given));
  const errors = validateSync(variables, {
    stopAtFirstError: true,
    validationError: { target: false, value: false },
  });
  if (errors.length > 0) {
    throw new ConfigError(errors.map((error) => Object.values(error.constraints ?? {})[0]));
  }
  return appConfigFrom(variables);
}

function appConfigFrom(variables: EnvironmentVariables) {
  const path = variables.DATABASE_PATH;
  return {
    nodeEnv: variables.NODE_ENV,
    port: variables.PORT,
    host: variables.HOST,
    databasePath: path === ':memory:' || isAbsolute(path) ? path : resolve(path),
    /** PostgreSQL; null: SQLite at `databasePath`. */
    databaseUrl: databaseUrl(variables),
    databaseSchema: variables.DATABASE_SCHEMA,
    dbPoolSize: variables.DB_POOL_SIZE,
    dbConnectTimeoutMs: variables.DB_CONNECT_TIMEOUT_MS,
    dbStatementTimeoutMs: variables.DB_STATEMENT_TIMEOUT_MS,
    dbOutageWaitMs: variables.DB_OUTAGE_WAIT_MS,
    dbOutageMaxWaiting: variables.DB_OUTAGE_MAX_WAITING,
    rateLimitEnabled: variables.RATE_LIMIT_ENABLED,
    rateLimitPerMinute: variables.RATE_LIMIT_PER_MINUTE,
    authFailuresPerMinute: variables.AUTH_FAILURES_PER_MINUTE,
    redisUrl: variables.REDIS_URL ?? null,
    readCacheSize: variables.READ_CACHE_SIZE,
    readCacheMegabytes: variables.READ_CACHE_MB,
    readCacheStaleMs: variables.READ_CACHE_STALE_MS,
    sqliteSynchronous: variables.SQLITE_SYNCHRONOUS,
    sqliteBusyTimeoutMs: variables.SQLITE_BUSY_TIMEOUT_MS,
    apiKeys: variables.API_KEYS as readonly string[],
    productionBaseUrl: withoutTrailingSlashes(variables.PRODUCTION_BASE_URL),
    stagingBaseUrl: withoutTrailingSlashes(variables.STAGING_BASE_URL),
    bodyLimitBytes: 16 * 1024,
    logLevel: variables.LOG_LEVEL,
    corsOrigins: variables.CORS_ORIGINS.map((origin) => new URL(origin).origin) as readonly string[],
    trustProxy: variables.TRUST_PROXY,
    shutdownTimeoutMs: variables.SHUTDOWN_TIMEOUT_MS,
    shutdownDrainMs: variables.SHUTDOWN_DRAIN_MS,
    http: {
      headersTimeoutMs: variables.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: variables.HTTP_REQUEST_TIMEOUT_MS,
      idleTimeoutMs: variables.HTTP_IDLE_TIMEOUT_MS,
      maxPipelined: variables.HTTP_MAX_PIPELINED,
      /** 0: no cap. */
      maxConnections: variables.HTTP_MAX_CONNECTIONS,
    },
    swaggerEnabled: variables.SWAGGER_ENABLED,
    metricsPort: variables.METRICS_PORT ?? null,
    metricsHost: variables.METRICS_HOST,
  };
}

function buildsPostgresUrl(variables: EnvironmentVariables): boolean {
  return variables.DATABASE_URL === undefined && variables.DB_TYPE === 'postgres';
}

function databaseUrl(variables: EnvironmentVariables): string | null {
  if (variables.DATABASE_URL !== undefined) return variables.DATABASE_URL;
  if (!buildsPostgresUrl(variables)) return null;
  const url = new URL('postgres://localhost');
  url.hostname = variables.DB_HOST;
  url.port = String(variables.DB_PORT);
  url.username = encodeURIComponent(variables.DB_USER);
  url.password = encodeURIComponent(variables.DB_PASSWORD);
  url.pathname = `/${encodeURIComponent(variables.DB_NAME)}`;
  return url.toString();
}

function withoutTrailingSlashes(url: string): string {
  return url.replace(/\/+$/, '');
}

function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

// Never print DATABASE_URL or REDIS_URL: they may hold a password.
function postgresUrlProblem(value: string, variables: EnvironmentVariables): string | undefined {
  if (variables.DB_TYPE === 'sqlite') return 'is set but DB_TYPE is sqlite: unset one of them';
  const url = parsedUrl(value);
  if (url === undefined) return 'must be a URL like postgres://user:password@host:5432/database';
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    return 'must start with postgres:// or postgresql://';
  }
  return undefined;
}

function redisUrlProblem(value: string): string | undefined {
  const protocol = parsedUrl(value)?.protocol;
  return protocol === 'redis:' || protocol === 'rediss:'
    ? undefined
    : 'must be a URL like redis://127.0.0.1:6379';
}

function httpUrlProblem(value: string): string | undefined {
  const protocol = parsedUrl(value)?.protocol;
  return protocol === 'http:' || protocol === 'https:'
    ? undefined
    : `must be an absolute http(s) URL ${got(value)}`;
}

// Never print a key: the wrong one is named by its position.
function apiKeysProblem(keys: string[]): string | undefined {
  const wrong = keys.findIndex((key) => !isWellFormedApiKey(key));
  if (wrong === -1) return undefined;
  return `entry ${wrong + 1} is not a valid key: use at least ${MIN_API_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + /`;
}

/** An origin as browsers send it: scheme, host and port, nothing else. */
function isOrigin(entry: string): boolean {
  const url = parsedUrl(entry);
  return (
    url !== undefined &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    url.pathname === '/' &&
    !entry.includes('?') &&
    !entry.includes('#')
  );
}

function corsOriginsProblem(origins: string[]): string | undefined {
  const wrong = origins.findIndex((origin) => !isOrigin(origin));
  if (wrong === -1) return undefined;
  return `entry ${wrong + 1} must be an origin such as https://app.example.com ${got(origins[wrong])}`;
}

/** `trust proxy` as Express reads it; a value its parser refuses stays as written. */
function parseTrustProxy({ value }: { value: unknown }): unknown {
  if (typeof value !== 'string') return value;
  if (value.trim() === '' || /^false$/i.test(value)) return false;
  if (/^true$/i.test(value)) return true;
  if (/^\d{1,3}$/.test(value)) return Number(value);
  const addresses = list(value);
  try {
    proxyAddr.compile(addresses);
  } catch {
    return value;
  }
  return addresses;
}

function trustProxyProblem(value: TrustProxy | string): string | undefined {
  if (typeof value !== 'string') return undefined;
  return `must be true, false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal, uniquelocal ${got(value)}`;
}

function metricsPortProblem(port: number | string, variables: EnvironmentVariables): string | undefined {
  if (port === 0 || port !== variables.PORT) return undefined;
  return `must differ from PORT (both ${port}): metrics have their own listener`;
}

/** The database, for messages: the SQLite path, or the PostgreSQL URL without its password. */
export function describeDatabase(config: AppConfig): string {
  if (config.databaseUrl === null)
    return `${config.databasePath} (SQLite, WAL, synchronous=${config.sqliteSynchronous})`;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = '***';
  return `${url.toString()} (PostgreSQL, schema ${config.databaseSchema})`;
}
