import { existsSync } from 'node:fs';
import { Logger } from 'nestjs-pino';
import { ResolvedKeys } from './common/auth/bootstrap-key';
import { RESOLVED_KEYS } from './common/auth/auth.module';
import { enableGracefulShutdown } from './common/lifecycle/graceful-shutdown';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { createApp, DOCS_PATH } from './setup-app';

function banner(url: string, config: AppConfig, keys: ResolvedKeys): string {
  const lines = [
    `Pet Store API listening on ${url}/v1`,
    `Swagger UI: ${url}/${DOCS_PATH}  (OpenAPI: ${url}/${DOCS_PATH}-json)`,
    `Database: ${config.databasePath} (SQLite, WAL, synchronous=${config.sqliteSynchronous})`,
  ];
  if (keys.source === 'environment') {
    lines.push(
      `Authentication: Authorization: Bearer <key>, with one of the ${keys.keys.length} key(s) in API_KEYS`,
    );
  } else if (keys.newKey) {
    const where = keys.keyFile ? `saved to ${keys.keyFile}` : 'in-memory database: a new key every start';
    lines.push(
      '',
      '================================================================================',
      '  No API_KEYS set: generated an API key for you. It is shown only this once.',
      `  ${keys.newKey}`,
      `  (${where})`,
      `  Try: curl -H "Authorization: Bearer <key>" ${url}/v1/pets`,
      '================================================================================',
    );
  } else {
    lines.push(`Authentication: Authorization: Bearer <key>, with the bootstrap key in ${keys.keyFile}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`petstore: configuration error: ${error.message}`);
    process.exit(1);
  }
  // Nest's own logger stays off until the app listens, so that a failure to start (a database
  // that can't be opened, a port in use) is the one line printed below; request logs are on.
  const app = await createApp(config, { logger: false });
  enableGracefulShutdown(app, config.shutdownTimeoutMs);
  await app.listen(config.port, config.host);
  app.useLogger(app.get(Logger));
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? 'localhost' : config.host;
  console.log(banner(`http://${shownHost}:${port}`, config, app.get<ResolvedKeys>(RESOLVED_KEYS)));
}

main().catch((error: unknown) => {
  console.error(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
