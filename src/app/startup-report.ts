import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger as PinoLogger } from 'pino';
import { KEY_SETUP } from '../auth/auth.module';
import { KeySetup } from '../auth/key-setup';
import { API_PREFIX } from '../common/resource-location';
import { AppConfig, describeDatabase } from '../config/app-config';
import { MetricsListener } from '../observability/metrics-listener';
import { ROOT_LOGGER } from '../observability/observability.module';
import { tracingDescription } from '../observability/tracing-state';
import { DOCS_PATH } from './setup-app';

export const TRUST_ANY_PROXY =
  'TRUST_PROXY=true takes the client address from X-Forwarded-For whoever sent it, so any client can ' +
  'choose the address its limits count against: name the proxy instead (TRUST_PROXY=loopback, ' +
  'a subnet such as 10.0.0.0/8, or the number of proxy hops)';

export const PRIVATE_WEBHOOKS =
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS=true lets webhook endpoints be loopback, private, link-local and ' +
  'cloud metadata addresses, so a key with webhooks:manage can make the service call inside your ' +
  'network: keep it to tests and internal networks';

/** Where the service listens (the address bound) and how to use it: a banner, or in production one log line. */
export function reportStart(app: NestExpressApplication, config: AppConfig): void {
  const { address, port, url } = listening(app);
  const local = ['0.0.0.0', '::'].includes(address) ? `http://localhost:${port}` : url;
  const keys = app.get<KeySetup>(KEY_SETUP);
  const facts = {
    url: `${url}/${API_PREFIX}`,
    docs: config.docs.swaggerEnabled ? `${local}/${DOCS_PATH}` : null,
    database: describeDatabase(config.database),
    keys: keys.source,
    accessTokens: config.auth.oidcIssuer,
    metrics: app.get(MetricsListener).url() ?? null,
    tracing: tracingDescription() ?? null,
  };
  const logger = app.get<PinoLogger>(ROOT_LOGGER);
  if (config.http.trustProxy === true) logger.warn(TRUST_ANY_PROXY);
  warnOfSettings(app, config);
  if (config.process.role === 'api' && config.events.natsUrl !== null)
    logger.warn('EVENTS_NATS_URL is set, but PROCESS_ROLE=api relays nothing: the workers relay to NATS');
  if (config.rateLimit.enabled && config.rateLimit.redisUrl === null && config.database.url !== null)
    logger.warn('REDIS_URL is not set: rate limits are counted per instance, not shared');
  if (config.nodeEnv === 'production') {
    logger.info(facts, `Pet Store API listening on ${facts.url}`);
    return;
  }
  const lines = [`Pet Store API listening on ${facts.url}`];
  if (local !== url) lines.push(`From this machine: ${local}/${API_PREFIX}`);
  if (facts.docs) lines.push(`Swagger UI: ${facts.docs}  (OpenAPI: ${facts.docs}-json)`);
  lines.push(`Database: ${facts.database}`);
  if (facts.metrics) lines.push(`Metrics: ${facts.metrics}`);
  if (facts.tracing) lines.push(`Tracing: ${facts.tracing}`);
  lines.push('', ...keyLines(keys, config, local));
  if (facts.accessTokens !== null)
    lines.push(`Also access tokens of ${facts.accessTokens} for audience ${config.auth.oidcAudience}`);
  console.log(lines.join('\n'));
}

/** A worker's one line: what it does and where its probes are. */
export function reportWorkerStart(app: NestExpressApplication, config: AppConfig): void {
  const health = listening(app).url;
  const logger = warnOfSettings(app, config);
  const facts = {
    role: 'worker',
    health: `${health}/health/ready`,
    metrics: `${health}/metrics`,
    database: describeDatabase(config.database),
    nats: config.events.natsUrl !== null,
  };
  const line = `Pet Store worker sending webhook deliveries${facts.nats ? ' and relaying to NATS' : ''}; health on ${facts.health}`;
  if (config.nodeEnv === 'production') logger.info(facts, line);
  else console.log([line, `Metrics: ${facts.metrics}`, `Database: ${facts.database}`].join('\n'));
}

function listening(app: NestExpressApplication): AddressInfo & { url: string } {
  const bound = app.getHttpServer().address() as AddressInfo;
  return {
    ...bound,
    url: `http://${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}`,
  };
}

/** The root logger, after the warnings that hold for every role. */
function warnOfSettings(app: NestExpressApplication, config: AppConfig): PinoLogger {
  const logger = app.get<PinoLogger>(ROOT_LOGGER);
  if (config.events.allowPrivateNetworks) logger.warn(PRIVATE_WEBHOOKS);
  return logger;
}

function keyLines(keys: KeySetup, config: AppConfig, url: string): string[] {
  if (!keys.newKey) {
    const from =
      keys.source === 'environment' ? 'API_KEYS or a stored key' : 'a stored key (npm run apikey -- list)';
    return [`Authentication: Authorization: Bearer <key>, with ${from}`];
  }
  const kept =
    config.database.url === null && config.database.path === ':memory:'
      ? 'The database is in memory: a new key is made at every start.'
      : 'Only its SHA-256 digest is stored (name "bootstrap"); copy the key now.';
  return [
    '================================================================================',
    '  No API keys yet: generated one for you. It is shown only this once.',
    `  ${keys.newKey}`,
    `  ${kept}`,
    `  Try: curl -H "Authorization: Bearer <key>" "${url}/${API_PREFIX}/pets?status=available"`,
    '  Manage keys: npm run apikey -- list | create --name <client> | revoke <id|prefix>',
    '================================================================================',
  ];
}
