import { isAbsolute, resolve } from 'node:path';
import proxyAddr from 'proxy-addr';
import { isWellFormedApiKey, MIN_API_KEY_LENGTH } from '../common/validation/api-key-format';

/** Animals kept in the read cache when PET_CACHE_SIZE is not set. */
export const DEFAULT_PET_CACHE_SIZE = 20000;

export type SqliteSynchronous = 'FULL' | 'NORMAL';

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Express's `trust proxy` setting: off, on, a number of hops, or the addresses/subnets trusted. */
export type TrustProxy = boolean | number | string[];

/**
 * The service's whole configuration, read once from the environment at start.
 * Only this folder (and the TypeORM CLI data source) reads `process.env`.
 */
export interface AppConfig {
  readonly nodeEnv: NodeEnv;
  readonly port: number;
  readonly host: string;
  /** SQLite file path, or `:memory:` (used when no PostgreSQL URL is configured). */
  readonly databasePath: string;
  /** PostgreSQL connection URL; when set the service runs on PostgreSQL instead of SQLite. */
  readonly databaseUrl: string | null;
  /** PostgreSQL schema holding the tables (created if missing). */
  readonly databaseSchema: string;
  /** PostgreSQL connections per instance. */
  readonly dbPoolSize: number;
  readonly dbConnectTimeoutMs: number;
  /** Longest a PostgreSQL statement may run before the server cancels it. */
  readonly dbStatementTimeoutMs: number;
  /** Per-API-key request limit (RATE_LIMIT_ENABLED, RATE_LIMIT_PER_MINUTE). */
  readonly rateLimitEnabled: boolean;
  readonly rateLimitPerMinute: number;
  /**
   * Requests without a valid key allowed per client address and minute before they are
   * answered 429 without a key lookup (AUTH_FAILURES_PER_MINUTE; off with RATE_LIMIT_ENABLED=false).
   */
  readonly authFailuresPerMinute: number;
  /** Redis shared by every instance for rate-limit counters; unset: counters in process. */
  readonly redisUrl: string | null;
  /** Animals kept in the in-process read cache (PET_CACHE_SIZE); 0 turns the caches off. */
  readonly petCacheSize: number;
  readonly sqliteSynchronous: SqliteSynchronous;
  /** Milliseconds a writer waits for a lock before SQLite reports busy. */
  readonly sqliteBusyTimeoutMs: number;
  /** Keys from `API_KEYS`, accepted beside the stored keys; empty when unset. */
  readonly apiKeys: readonly string[];
  readonly productionBaseUrl: string;
  readonly stagingBaseUrl: string;
  readonly bodyLimitBytes: number;
  readonly logLevel: LogLevel;
  /** Browser origins allowed by CORS; empty: CORS is off. */
  readonly corsOrigins: readonly string[];
  readonly trustProxy: TrustProxy;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  readonly shutdownTimeoutMs: number;
  /** Serve Swagger UI and the OpenAPI document at /docs, /docs-json, /docs-yaml. */
  readonly swaggerEnabled: boolean;
  /** Port of the Prometheus metrics listener (METRICS_PORT); null: no metrics are kept at all. */
  readonly metricsPort: number | null;
  /** Interface of the metrics listener (METRICS_HOST), never the API's by default. */
  readonly metricsHost: string;
}

export class ConfigError extends Error {
  /** Every problem found, one line each (a single one for an error about one variable). */
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(list.join('\n'));
    this.name = 'ConfigError';
    this.problems = list;
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toUpperCase() as T;
  if (!allowed.includes(value)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
  }
  return value;
}

function url(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL (got "${raw}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http(s) URL (got "${raw}")`);
  }
  return raw.replace(/\/+$/, '');
}

function apiKeys(env: Env): string[] {
  const raw = env.API_KEYS;
  if (raw === undefined || raw.trim() === '') return [];
  const keys = raw
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key !== '');
  keys.forEach((key, index) => {
    // Never print the key itself: say which one is wrong by position.
    if (!isWellFormedApiKey(key)) {
      throw new ConfigError(
        `API_KEYS entry ${index + 1} is not a valid key: use at least ${MIN_API_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + /`,
      );
    }
  });
  return keys;
}

/** An interface to listen on: a host name or an IP address. */
function host(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) {
    throw new ConfigError(`${name} must be a host name or IP address (got "${raw}")`);
  }
  return raw;
}

function databasePath(env: Env): string {
  const raw = env.DATABASE_PATH;
  if (raw === undefined || raw === '') return resolve('data', 'petstore.sqlite');
  if (raw === ':memory:') return raw;
  if (raw.includes('\0')) throw new ConfigError('DATABASE_PATH must be a file path or :memory:');
  return isAbsolute(raw) ? raw : resolve(raw);
}

function redisUrl(env: Env): string | null {
  const raw = env.REDIS_URL;
  if (raw === undefined || raw === '') return null;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:')) {
    throw new ConfigError('REDIS_URL must be a URL like redis://127.0.0.1:6379');
  }
  return raw;
}

/** `DATABASE_URL=postgres://...`, or `DB_TYPE=postgres` with `DB_HOST`, `DB_PORT`, `DB_USER`, `DB_PASSWORD`, `DB_NAME`. */
function databaseUrl(env: Env): string | null {
  const type = (env.DB_TYPE ?? '').toLowerCase();
  if (type !== '' && type !== 'sqlite' && type !== 'postgres') {
    throw new ConfigError(`DB_TYPE must be sqlite or postgres (got "${env.DB_TYPE}")`);
  }
  const raw = env.DATABASE_URL;
  if (raw !== undefined && raw !== '') {
    if (type === 'sqlite')
      throw new ConfigError('DATABASE_URL is set but DB_TYPE is sqlite: unset one of them');
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      // Never print the URL: it may hold a password.
      throw new ConfigError('DATABASE_URL must be a URL like postgres://user:password@host:5432/database');
    }
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
      throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
    }
    return raw;
  }
  if (type !== 'postgres') return null;
  const url = new URL('postgres://localhost');
  url.hostname = env.DB_HOST || 'localhost';
  url.port = String(integer(env, 'DB_PORT', 5432, 1, 65535));
  url.username = encodeURIComponent(env.DB_USER || 'postgres');
  url.password = encodeURIComponent(env.DB_PASSWORD ?? '');
  url.pathname = `/${encodeURIComponent(env.DB_NAME || 'petstore')}`;
  return url.toString();
}

function schemaName(env: Env): string {
  const raw = env.DATABASE_SCHEMA;
  if (raw === undefined || raw === '') return 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) {
    throw new ConfigError(`DATABASE_SCHEMA must be a lower-case SQL identifier (got "${raw}")`);
  }
  return raw;
}

/** The database the service uses, for messages: the SQLite path, or the PostgreSQL URL without its password. */
export function describeDatabase(config: AppConfig): string {
  if (config.databaseUrl === null)
    return `${config.databasePath} (SQLite, WAL, synchronous=${config.sqliteSynchronous})`;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = '***';
  return `${url.toString()} (PostgreSQL, schema ${config.databaseSchema})`;
}

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  const value = raw.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(value)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
  }
  return value;
}

/** The one boolean syntax of every flag: `true` or `false`, in any case. */
function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^true$/i.test(raw)) return true;
  if (/^false$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

function nodeEnv(env: Env): NodeEnv {
  const raw = env.NODE_ENV;
  if (raw === undefined || raw === '') return 'development';
  if (!(NODE_ENVS as readonly string[]).includes(raw)) {
    throw new ConfigError(`NODE_ENV must be one of ${NODE_ENVS.join(', ')} (got "${raw}")`);
  }
  return raw as NodeEnv;
}

/** A comma-separated list, entries trimmed, empty entries dropped. */
function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

function corsOrigins(env: Env): string[] {
  return list(env.CORS_ORIGINS).map((entry, index) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(entry);
    } catch {
      parsed = undefined;
    }
    const isOrigin =
      parsed !== undefined &&
      (parsed.protocol === 'http:' || parsed.protocol === 'https:') &&
      parsed.username === '' &&
      parsed.password === '' &&
      parsed.pathname === '/' &&
      !entry.includes('?') &&
      !entry.includes('#');
    if (!isOrigin) {
      throw new ConfigError(
        `CORS_ORIGINS entry ${index + 1} must be an origin such as https://app.example.com (got "${entry}")`,
      );
    }
    return parsed!.origin;
  });
}

/** As Express reads `trust proxy`; the address list is checked by Express's own parser. */
function trustProxy(env: Env): TrustProxy {
  const raw = env.TRUST_PROXY;
  if (raw === undefined || raw.trim() === '' || /^false$/i.test(raw)) return false;
  if (/^true$/i.test(raw)) return true;
  if (/^\d{1,3}$/.test(raw)) return Number(raw);
  const addresses = list(raw);
  try {
    proxyAddr.compile(addresses);
  } catch {
    throw new ConfigError(
      `TRUST_PROXY must be true, false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal, uniquelocal (got "${raw}")`,
    );
  }
  return addresses;
}

/** METRICS_PORT: unset or empty turns metrics off; 0 takes any free port. */
function metricsPort(env: Env): number | null {
  if (env.METRICS_PORT === undefined || env.METRICS_PORT === '') return null;
  return integer(env, 'METRICS_PORT', 0, 0, 65535);
}

/**
 * Builds the configuration from an environment, or throws one ConfigError that names every
 * problem found, one line each (never a secret value).
 */
export function loadConfig(env: Env): AppConfig {
  const problems: string[] = [];
  /** The setting's value, or (after noting its problem) a stand-in never used. */
  const read = <T>(parse: () => T): T => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined as T;
    }
  };
  const config: AppConfig = {
    nodeEnv: read(() => nodeEnv(env)),
    port: read(() => integer(env, 'PORT', 3000, 0, 65535)),
    host: read(() => host(env, 'HOST', '0.0.0.0')),
    databasePath: read(() => databasePath(env)),
    databaseUrl: read(() => databaseUrl(env)),
    databaseSchema: read(() => schemaName(env)),
    dbPoolSize: read(() => integer(env, 'DB_POOL_SIZE', 10, 2, 1000)),
    dbConnectTimeoutMs: read(() => integer(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 600000)),
    dbStatementTimeoutMs: read(() => integer(env, 'DB_STATEMENT_TIMEOUT_MS', 15000, 100, 3600000)),
    rateLimitEnabled: read(() => boolean(env, 'RATE_LIMIT_ENABLED', true)),
    rateLimitPerMinute: read(() => integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000)),
    authFailuresPerMinute: read(() => integer(env, 'AUTH_FAILURES_PER_MINUTE', 30, 1, 10_000_000)),
    redisUrl: read(() => redisUrl(env)),
    petCacheSize: read(() => integer(env, 'PET_CACHE_SIZE', DEFAULT_PET_CACHE_SIZE, 0, 10_000_000)),
    sqliteSynchronous: read(() => oneOf(env, 'SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL')),
    sqliteBusyTimeoutMs: read(() => integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600000)),
    apiKeys: read(() => apiKeys(env)),
    productionBaseUrl: read(() => url(env, 'PRODUCTION_BASE_URL', 'https://api.petstore.example.com/v1')),
    stagingBaseUrl: read(() => url(env, 'STAGING_BASE_URL', 'https://staging-api.petstore.example.com/v1')),
    bodyLimitBytes: 16 * 1024,
    logLevel: read(() => logLevel(env)),
    corsOrigins: read(() => corsOrigins(env)),
    trustProxy: read(() => trustProxy(env)),
    shutdownTimeoutMs: read(() => integer(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0, 600000)),
    swaggerEnabled: read(() => boolean(env, 'SWAGGER_ENABLED', true)),
    metricsPort: read(() => metricsPort(env)),
    metricsHost: read(() => host(env, 'METRICS_HOST', '127.0.0.1')),
  };
  if (config.metricsPort !== null && config.metricsPort !== 0 && config.metricsPort === config.port) {
    problems.push(
      `METRICS_PORT must differ from PORT (both ${config.port}): metrics have their own listener`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
