import { plainToInstance, Transform } from 'class-transformer';
import { Allow, IsOptional, Matches, ValidateIf, validateSync } from 'class-validator';
import { isAbsolute, resolve } from 'node:path';
import proxyAddr from 'proxy-addr';
import { isWellFormedApiKey, MIN_API_KEY_LENGTH } from '../common/validation/api-key-format';
import {
  CommaSeparated,
  Flag,
  got,
  Integer,
  list,
  Matching,
  OneOf,
  Satisfies,
  Variable,
  variablesOf,
} from './environment.rules';

const SQLITE_SYNCHRONOUS_MODES = ['FULL', 'NORMAL'] as const;

const NODE_ENVS = ['development', 'production', 'test'] as const;
type NodeEnv = (typeof NODE_ENVS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const HOST_NAME = /^[A-Za-z0-9.:\-[\]]+$/;
const HOST_RULE = 'must be a host name or IP address';

// Each slice lists its variables with their rules and defaults, once; empty counts as unset. A
// problem quotes the value, except for secrets: API_KEYS, DB_PASSWORD, and URLs that may hold one.

class NodeConfig {
  @Variable('NODE_ENV') @OneOf(NODE_ENVS) nodeEnv: NodeEnv = 'development';
}

export class HttpConfig {
  @Variable('PORT') @Integer(0, 65535) port = 3000;
  @Variable('HOST') @Matching(HOST_NAME, HOST_RULE) host = '0.0.0.0';
  @Variable('CORS_ORIGINS')
  @CommaSeparated()
  @Satisfies(corsOriginsProblem)
  corsOrigins: readonly string[] = [];
  /** Express's `trust proxy`: off, on, a number of hops, or the trusted addresses. */
  @Variable('TRUST_PROXY')
  @Transform(parseTrustProxy)
  @Satisfies(trustProxyProblem)
  trustProxy: boolean | number | string[] = false;
  @Variable('HTTP_HEADERS_TIMEOUT_MS') @Integer(1000, 600000) headersTimeoutMs = 15000;
  @Variable('HTTP_REQUEST_TIMEOUT_MS') @Integer(1000, 3600000) requestTimeoutMs = 30000;
  @Variable('HTTP_IDLE_TIMEOUT_MS') @Integer(1000, 3600000) idleTimeoutMs = 30000;
  @Variable('HTTP_MAX_PIPELINED') @Integer(1, 1000) maxPipelined = 16;
  /** 0: no cap. */
  @Variable('HTTP_MAX_CONNECTIONS') @Integer(0, 1000000) maxConnections = 0;
  bodyLimitBytes = 16 * 1024;
}

export const PROCESS_ROLES = ['all', 'api', 'worker'] as const;

/** What this process does: everything, only the API, or only the deliveries (docs/deployment.md#workers). */
export class ProcessConfig {
  @Variable('PROCESS_ROLE') @OneOf(PROCESS_ROLES, { ignoreCase: true }) role: (typeof PROCESS_ROLES)[number] =
    'all';
  /** A worker's only listener: its probes and its metrics. */
  @Variable('HEALTH_PORT') @Integer(0, 65535) healthPort = 8081;
}

export class ShutdownConfig {
  @Variable('SHUTDOWN_DRAIN_MS') @Integer(0, 600000) drainMs = 5000;
  @Variable('SHUTDOWN_TIMEOUT_MS') @Integer(0, 600000) timeoutMs = 10000;
}

export class DatabaseConfig {
  @Variable('DATABASE_PATH')
  @Matches(/^[^\0]*$/, { message: 'DATABASE_PATH must be a file path or :memory:' })
  path = './data/petstore.sqlite';
  /** PostgreSQL, from DATABASE_URL or DB_TYPE=postgres and the DB_* parts; null: SQLite at `path`. */
  url: string | null = null;
  @Variable('DATABASE_SCHEMA')
  @Matching(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier')
  schema = 'public';
  @Variable('DB_POOL_SIZE') @Integer(2, 1000) poolSize = 10;
  @Variable('DB_CONNECT_TIMEOUT_MS') @Integer(100, 600000) connectTimeoutMs = 5000;
  @Variable('DB_STATEMENT_TIMEOUT_MS') @Integer(100, 3600000) statementTimeoutMs = 15000;
  @Variable('DB_OUTAGE_WAIT_MS') @Integer(0, 60000) outageWaitMs = 2000;
  @Variable('DB_OUTAGE_MAX_WAITING') @Integer(0, 100000) outageMaxWaiting = 200;
  @Variable('SQLITE_SYNCHRONOUS')
  @OneOf(SQLITE_SYNCHRONOUS_MODES, { ignoreCase: true })
  sqliteSynchronous: (typeof SQLITE_SYNCHRONOUS_MODES)[number] = 'FULL';
  @Variable('SQLITE_BUSY_TIMEOUT_MS') @Integer(0, 600000) sqliteBusyTimeoutMs = 5000;
  @Variable('READ_CACHE_SIZE') @Integer(0, 10_000_000) readCacheSize = 20000;
  @Variable('READ_CACHE_MB') @Integer(1, 4096) readCacheMegabytes = 16;
  @Variable('READ_CACHE_STALE_MS') @Integer(100, 60000) readCacheStaleMs = 1000;
}

/** Where PostgreSQL is; only its URL is kept, as `database.url`. */
class PostgresLocation {
  @Variable('DB_TYPE')
  @IsOptional()
  @OneOf(['sqlite', 'postgres'], { ignoreCase: true, rule: 'must be sqlite or postgres' })
  type?: 'sqlite' | 'postgres';
  @Variable('DATABASE_URL') @IsOptional() @Satisfies(postgresUrlProblem) url?: string;
  @Variable('DB_HOST') @Allow() host = 'localhost';
  // Checked only when used: Kubernetes and Docker links set it to `tcp://...` beside a service `db`.
  @Variable('DB_PORT') @ValidateIf(buildsPostgresUrl) @Integer(1, 65535) port = 5432;
  @Variable('DB_USER') @Allow() user = 'postgres';
  @Variable('DB_PASSWORD') @Allow() password = '';
  @Variable('DB_NAME') @Allow() name = 'petstore';
}

export class RateLimitConfig {
  @Variable('RATE_LIMIT_ENABLED') @Flag() enabled = true;
  @Variable('RATE_LIMIT_PER_MINUTE') @Integer(1, 10_000_000) perMinute = 600;
  @Variable('AUTH_FAILURES_PER_MINUTE') @Integer(1, 10_000_000) authFailuresPerMinute = 30;
  /** Counters shared by every instance; null: each instance counts its own. */
  @Variable('REDIS_URL') @IsOptional() @Satisfies(redisUrlProblem) redisUrl: string | null = null;
}

export class AuthConfig {
  @Variable('API_KEYS') @CommaSeparated() @Satisfies(apiKeysProblem) apiKeys: readonly string[] = [];
  /** The longest a new stored key may live; null: no limit. */
  @Variable('API_KEY_MAX_LIFETIME_DAYS') @IsOptional() @Integer(1, 3650) maxLifetimeDays: number | null =
    null;
  /** Compared with `iss` exactly as written, a trailing slash included (Auth0's has one). */
  @Variable('OIDC_ISSUER') @IsOptional() @Satisfies(issuerProblem) oidcIssuer: string | null = null;
  @Variable('OIDC_AUDIENCE')
  @ValidateIf((auth: AuthConfig) => auth.oidcIssuer !== null || auth.oidcAudience !== null)
  @Satisfies(audienceProblem)
  oidcAudience: string | null = null;
  /** Where set, only a token's scopes that begin with it count, read without it (`api://petstore/pets:read`). */
  @Variable('OIDC_SCOPE_PREFIX')
  @ValidateIf((auth: AuthConfig) => auth.oidcScopePrefix !== '')
  @Satisfies(scopePrefixProblem)
  oidcScopePrefix = '';
}

export class AuditConfig {
  @Variable('AUDIT_RETENTION_DAYS') @Integer(1, 36500) retentionDays = 180;
}

/** A worker's look for new events: a delivery waits this long at most before it is claimed. */
const WORKER_POLL_MS = 200;
const DURATION = /^(\d{1,6})(ms|s|m|h)$/;
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export class EventsConfig {
  @Variable('EVENTS_RETENTION_DAYS') @Integer(1, 36500) retentionDays = 30;
  /** JetStream as a second sink of the outbox; null: webhooks and the feed only. */
  @Variable('EVENTS_NATS_URL') @IsOptional() @Satisfies(natsUrlProblem) natsUrl: string | null = null;
  @Variable('WEBHOOK_ALLOW_HTTP') @Flag() allowHttp = false;
  @Variable('WEBHOOK_ALLOW_PRIVATE_NETWORKS') @Flag() allowPrivateNetworks = false;
  /** The wait before each retry of a failed delivery (`durationsMs`). */
  @Variable('WEBHOOK_RETRY_SCHEDULE')
  @Satisfies(retryScheduleProblem)
  retrySchedule = '5s,5m,30m,2h,5h,10h,10h';
  /** Attempts in flight at once, per instance. */
  @Variable('WEBHOOK_CONCURRENCY') @Integer(1, 1000) concurrency = 64;
  /** How often the outbox's consumers look for events they were not told of: a worker is told of none. */
  pollMs = 1000;
}

class DocsConfig {
  @Variable('SWAGGER_ENABLED') @Flag() swaggerEnabled = true;
  @Variable('PRODUCTION_BASE_URL')
  @Transform(withoutTrailingSlashes)
  @Satisfies(httpUrlProblem)
  productionBaseUrl = 'https://api.petstore.example.com/v1';
  @Variable('STAGING_BASE_URL')
  @Transform(withoutTrailingSlashes)
  @Satisfies(httpUrlProblem)
  stagingBaseUrl = 'https://staging-api.petstore.example.com/v1';
}

class LogConfig {
  @Variable('LOG_LEVEL') @OneOf(LOG_LEVELS, { ignoreCase: true }) level: (typeof LOG_LEVELS)[number] = 'info';
}

export class MetricsConfig {
  /** Null: no metrics are kept at all; 0 takes any free port. */
  @Variable('METRICS_PORT') @IsOptional() @Integer(0, 65535) port: number | null = null;
  @Variable('METRICS_HOST') @Matching(HOST_NAME, HOST_RULE) host = '127.0.0.1';
  /** False in a worker: metrics are always kept there, served beside its probes on HEALTH_PORT. */
  ownListener = true;
}

const SLICES = {
  node: NodeConfig,
  process: ProcessConfig,
  http: HttpConfig,
  shutdown: ShutdownConfig,
  database: DatabaseConfig,
  postgres: PostgresLocation,
  rateLimit: RateLimitConfig,
  auth: AuthConfig,
  audit: AuditConfig,
  events: EventsConfig,
  log: LogConfig,
  docs: DocsConfig,
  metrics: MetricsConfig,
};
type Slices = { [name in keyof typeof SLICES]: InstanceType<(typeof SLICES)[name]> };

/** Read once from the environment at start (docs/configuration.md); only this folder reads `process.env`. */
export type AppConfig = { readonly nodeEnv: NodeEnv } & {
  readonly [name in Exclude<keyof Slices, 'node' | 'postgres'>]: Readonly<Slices[name]>;
};

type Setting = string | number | boolean | readonly string[] | null;
/** Every variable, with its default (null or undefined: unset). */
export const ENVIRONMENT_DEFAULTS: ReadonlyMap<string, Setting> = new Map(
  Object.values(SLICES).flatMap((slice: new () => object) => {
    const defaults = new slice() as Record<string, Setting>;
    return [...variablesOf(slice)].map(([property, name]) => [name, defaults[property]] as const);
  }),
);

/** The configuration of an environment, or one ConfigError naming every problem found. */
export function loadConfig(env: Record<string, string | undefined>): AppConfig {
  const given = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const slices = Object.fromEntries(
    Object.entries(SLICES).map(([name, slice]: [string, new () => object]) => [
      name,
      plainToInstance(slice, given, { excludeExtraneousValues: true, exposeDefaultValues: true }),
    ]),
  ) as unknown as Slices;
  const problems = Object.values(slices).flatMap((slice) =>
    validateSync(slice, { stopAtFirstError: true, validationError: { target: false, value: false } }).map(
      (error) => Object.values(error.constraints ?? {})[0],
    ),
  );
  const { node, postgres, http, database, metrics, ...rest } = slices;
  const { role } = rest.process;
  if (role !== 'worker' && metrics.port !== null && metrics.port !== 0 && metrics.port === http.port)
    problems.push(`METRICS_PORT must differ from PORT (both ${http.port}): metrics have their own listener`);
  const inMemory = postgres.url === undefined && postgres.type !== 'postgres' && database.path === ':memory:';
  if (role !== 'all' && inMemory)
    problems.push(
      `PROCESS_ROLE=${role} needs a database that the other role's processes can open: a DATABASE_PATH file or PostgreSQL, not :memory:`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  http.corsOrigins = http.corsOrigins.map((origin) => new URL(origin).origin);
  if (database.path !== ':memory:' && !isAbsolute(database.path)) database.path = resolve(database.path);
  database.url = postgresUrl(postgres);
  if (role === 'worker') {
    Object.assign(metrics, { port: rest.process.healthPort, ownListener: false });
    rest.events.pollMs = WORKER_POLL_MS;
  }
  return { nodeEnv: node.nodeEnv, http, database, metrics, ...rest };
}

function buildsPostgresUrl(location: PostgresLocation): boolean {
  return location.url === undefined && location.type === 'postgres';
}

function postgresUrl(location: PostgresLocation): string | null {
  if (location.url !== undefined) return location.url;
  if (!buildsPostgresUrl(location)) return null;
  const url = new URL('postgres://localhost');
  url.hostname = location.host;
  url.port = String(location.port);
  url.username = encodeURIComponent(location.user);
  url.password = encodeURIComponent(location.password);
  url.pathname = `/${encodeURIComponent(location.name)}`;
  return url.toString();
}

function withoutTrailingSlashes({ value }: { value: unknown }): unknown {
  return typeof value === 'string' ? value.replace(/\/+$/, '') : value;
}

// Never print DATABASE_URL or REDIS_URL: they may hold a password.
function postgresUrlProblem(value: string, location: PostgresLocation): string | undefined {
  if (location.type === 'sqlite') return 'is set but DB_TYPE is sqlite: unset one of them';
  if (!URL.canParse(value)) return 'must be a URL like postgres://user:password@host:5432/database';
  return isUrlOf(value, 'postgres:', 'postgresql:')
    ? undefined
    : 'must start with postgres:// or postgresql://';
}

const isUrlOf = (value: string, ...protocols: string[]) =>
  URL.canParse(value) && protocols.includes(new URL(value).protocol);

function redisUrlProblem(value: string): string | undefined {
  return isUrlOf(value, 'redis:', 'rediss:') ? undefined : 'must be a URL like redis://127.0.0.1:6379';
}

function natsUrlProblem(value: string): string | undefined {
  return list(value).every((url) => isUrlOf(url, 'nats:', 'tls:'))
    ? undefined
    : 'must be one or more URLs like nats://127.0.0.1:4222, comma-separated';
}

/** `5s,5m,2h` (ms, s, m, h) in ms; undefined unless each entry is one. */
export function durationsMs(text: string): number[] | undefined {
  const parsed = list(text).map((entry) => DURATION.exec(entry));
  if (parsed.length === 0 || parsed.length > 20 || parsed.some((match) => !match)) return undefined;
  return parsed.map((match) => Number(match![1]) * UNIT_MS[match![2] as keyof typeof UNIT_MS]);
}

function retryScheduleProblem(value: string): string | undefined {
  return durationsMs(value)
    ? undefined
    : `must be 1 to 20 durations like 5s,5m,2h (ms, s, m or h), comma-separated ${got(value)}`;
}

function httpUrlProblem(value: string): string | undefined {
  return isUrlOf(value, 'http:', 'https:') ? undefined : `must be an absolute http(s) URL ${got(value)}`;
}

/** https, or http on a loopback address only (tests, development): what it serves is trusted. */
export function isTrustedUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol, hostname, search, hash, username, password } = new URL(value);
  if (search || hash || username || password) return false;
  const loopback = hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
  return protocol === 'https:' || (protocol === 'http:' && loopback);
}

function issuerProblem(value: string): string | undefined {
  return isTrustedUrl(value)
    ? undefined
    : `must be the issuer's https URL (http only on a loopback address) ${got(value)}`;
}

function scopePrefixProblem(value: string, auth: AuthConfig): string | undefined {
  if (auth.oidcIssuer === null) return 'is set but OIDC_ISSUER is not';
  return /^[\x21-\x7e]{1,200}$/.test(value)
    ? undefined
    : `must be printable ASCII without spaces ${got(value)}`;
}

function audienceProblem(value: string | null, auth: AuthConfig): string | undefined {
  if (auth.oidcIssuer === null) return 'is set but OIDC_ISSUER is not: set both or neither';
  if (value === null)
    return 'must be set with OIDC_ISSUER: the audience the identity provider puts in tokens for this API';
  return /^[\x21-\x7e]{1,200}$/.test(value)
    ? undefined
    : `must be printable ASCII without spaces ${got(value)}`;
}

// Never print a key: the wrong one is named by its position.
function apiKeysProblem(keys: string[]): string | undefined {
  const wrong = keys.findIndex((key) => !isWellFormedApiKey(key));
  if (wrong === -1) return undefined;
  return `entry ${wrong + 1} is not a valid key: use at least ${MIN_API_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + /`;
}

/** Each an origin as browsers send it: scheme, host and port, nothing else. */
function corsOriginsProblem(origins: string[]): string | undefined {
  const wrong = origins.findIndex(
    (origin) => !isUrlOf(origin, 'http:', 'https:') || `${new URL(origin).origin}/` !== new URL(origin).href,
  );
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

function trustProxyProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return `must be true, false, a number of hops, or a comma-separated list of addresses, subnets, loopback, linklocal, uniquelocal ${got(value)}`;
}

/** The database, for messages: the SQLite path, or the PostgreSQL URL without its password. */
export function describeDatabase(database: DatabaseConfig): string {
  if (database.url === null)
    return `${database.path} (SQLite, WAL, synchronous=${database.sqliteSynchronous})`;
  const url = new URL(database.url);
  if (url.password) url.password = '***';
  return `${url.toString()} (PostgreSQL, schema ${database.schema})`;
}
