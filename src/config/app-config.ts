import { isAbsolute, resolve } from 'node:path';
import { isWellFormedApiKey, MIN_API_KEY_LENGTH } from '../common/auth/api-key.format';

export type SqliteSynchronous = 'FULL' | 'NORMAL';

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
  /** Keys from `API_KEYS`, accepted beside the stored keys; empty when unset. */
  readonly apiKeys: readonly string[];
  readonly productionBaseUrl: string;
  readonly stagingBaseUrl: string;
  readonly bodyLimitBytes: number;
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

/** Builds the configuration from an environment, or throws a ConfigError with one clear line. */
export function loadConfig(env: Env): AppConfig {
  const database = databasePath(env);
  return {
    nodeEnv: env.NODE_ENV || 'development',
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: host(env),
    databasePath: database,
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', ['FULL', 'NORMAL'] as const, 'FULL'),
    sqliteBusyTimeoutMs: integer(env, 'SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 600000),
    apiKeys: apiKeys(env),
    productionBaseUrl: url(env, 'PRODUCTION_BASE_URL', 'https://api.petstore.example.com/v1'),
    stagingBaseUrl: url(env, 'STAGING_BASE_URL', 'https://staging-api.petstore.example.com/v1'),
    bodyLimitBytes: 16 * 1024,
  };
}
