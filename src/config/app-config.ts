import { isAbsolute, resolve } from 'node:path';
import proxyAddr from 'proxy-addr';
import { isWellFormedApiKey, MIN_API_KEY_LENGTH } from '../common/auth/api-key.format';

export type SqliteSynchronous = 'FULL' | 'NORMAL';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Express's `trust proxy` setting: off, on, a number of hops, or the addresses/subnets trusted. */
export type TrustProxy = boolean | number | string[];

/**
 * The service's whole configuration, read once from the environment at start.
 * Only this folder (and the TypeORM CLI data source) reads `process.env`.
 */
export interface AppConfig {
  readonly nodeEnv: string;
  readonly port: number;
  readonly host: string;
  /** SQLite file path, or `:memory:`. */
  readonly databasePath: string;
  readonly sqliteSynchronous: SqliteSynchronous;
  /** Milliseconds a writer waits for a lock before SQLite reports busy. */
  readonly sqliteBusyTimeoutMs: number;
  /** Keys from `API_KEYS`; empty when unset (a bootstrap key is then used). */
  readonly apiKeys: readonly string[];
  /** Where the generated first-run key is kept when `API_KEYS` is unset. */
  readonly bootstrapKeyPath: string | null;
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
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
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

function host(env: Env): string {
  const raw = env.HOST;
  if (raw === undefined || raw === '') return '0.0.0.0';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(raw)) {
    throw new ConfigError(`HOST must be a host name or IP address (got "${raw}")`);
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

function logLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === '') return 'info';
  const value = raw.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(value)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^true$/i.test(raw)) return true;
  if (/^false$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
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

/** Builds the configuration from an environment, or throws a ConfigError with one clear line. */
export function loadConfig(env: Env): AppConfig {
  const database = databasePath(env);
  const nodeEnv = env.NODE_ENV || 'development';
  const keys = apiKeys(env);
  if (nodeEnv === 'production' && keys.length === 0) {
    throw new ConfigError(
      'API_KEYS must be set when NODE_ENV is production (no key is generated in production)',
    );
  }
  return {
    nodeEnv,
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: host(env),
    databasePath: database,
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL'),
    sqliteBusyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600000),
    apiKeys: keys,
    bootstrapKeyPath: database === ':memory:' ? null : resolve(database, '..', 'bootstrap-api-key'),
    productionBaseUrl: url(env, 'PRODUCTION_BASE_URL', 'https://api.petstore.example.com/v1'),
    stagingBaseUrl: url(env, 'STAGING_BASE_URL', 'https://staging-api.petstore.example.com/v1'),
    bodyLimitBytes: 16 * 1024,
    logLevel: logLevel(env),
    corsOrigins: corsOrigins(env),
    trustProxy: trustProxy(env),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0, 600000),
    swaggerEnabled: boolean(env, 'SWAGGER_ENABLED', true),
  };
}
