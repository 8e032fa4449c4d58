// First: tracing must be set up before the modules it instruments are loaded.
import './observability/tracing';
// Then: the garbage collector's settings, before the modules' objects fill the heap.
import './common/memory/apply-gc-settings';
import type { Logger as PinoLogger } from 'pino';
import { KEY_SETUP } from './auth/auth.module';
import { KeySetup } from './auth/key-setup';
import { API_PREFIX } from './common/http/api-prefix';
import { ROOT_LOGGER } from './common/logging/logging.module';
import { enableGracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { PinoNestLogger } from './common/logging/nest-logger';
import { AppConfig, describeDatabase } from './config/app-config';
import { configFromEnvironment } from './config/environment';
import { MetricsListener } from './observability/metrics-listener';
import { tracingDescription } from './observability/tracing-state';
import { createApp, DOCS_PATH } from './setup-app';

function banner(url: string, config: AppConfig, keys: KeySetup, metricsUrl: string | undefined): string {
  const lines = [
    `Pet Store API listening on ${url}/v1`,
    `Swagger UI: ${url}/${DOCS_PATH}  (OpenAPI: ${url}/${DOCS_PATH}-json)`,
    `Database: ${describeDatabase(config)}`,
  ];
  if (metricsUrl) lines.push(`Metrics: ${metricsUrl}`);
  const tracing = tracingDescription();
  if (tracing) lines.push(`Tracing: ${tracing}`);
  if (keys.newKey) {
    const kept =
      config.databaseUrl === null && config.databasePath === ':memory:'
        ? 'The database is in memory: a new key is made at every start.'
        : 'Only its SHA-256 digest is stored (name "bootstrap"); copy the key now.';
    lines.push(
      '',
      '================================================================================',
      '  No API keys yet: generated one for you. It is shown only this once.',
      `  ${keys.newKey}`,
      `  ${kept}`,
      `  Try: curl -H "Authorization: Bearer <key>" ${url}/v1/pets`,
      '  Manage keys: npm run apikey -- list | create --name <client> | revoke <id|prefix>',
      '================================================================================',
    );
  } else {
    const from =
      keys.source === 'environment' ? 'API_KEYS or a stored key' : 'a stored key (npm run apikey -- list)';
    lines.push(`Authentication: Authorization: Bearer <key>, with ${from}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const config = configFromEnvironment('petstore');
  // Nest's own logger stays off until the app listens, so that a failure to start (a database
  // that can't be opened, a port in use) is the one line printed below; request logs are on.
  const app = await createApp(config, { logger: false });
  enableGracefulShutdown(app, config.shutdownTimeoutMs);
  await app.listen(config.port, config.host);
  app.useLogger(app.get(PinoNestLogger));
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? 'localhost' : config.host;
  const url = `http://${shownHost}:${port}`;
  const keys = app.get<KeySetup>(KEY_SETUP);
  const metricsUrl = app.get(MetricsListener).url();
  if (config.nodeEnv === 'production') {
    // Production's standard output is JSON lines only: the same facts as one log line.
    app.get<PinoLogger>(ROOT_LOGGER).info(
      {
        url: `${url}/${API_PREFIX}`,
        docs: config.swaggerEnabled ? `${url}/${DOCS_PATH}` : null,
        database: describeDatabase(config),
        keys: keys.source,
        metrics: metricsUrl ?? null,
        tracing: tracingDescription() ?? null,
      },
      `Pet Store API listening on ${url}/${API_PREFIX}`,
    );
  } else {
    console.log(banner(url, config, keys, metricsUrl));
  }
}

main().catch((error: unknown) => {
  console.error(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
