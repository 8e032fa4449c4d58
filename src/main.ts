// First: tracing instruments the modules loaded after it.
import './observability/tracing';
import { configFromEnvironment } from './config/environment';
import { applyGcSettings } from './gc-settings';
import { enableGracefulShutdown } from './http/graceful-shutdown';
import { PinoNestLogger } from './observability/nest-logger';
import { createApp, createWorker } from './app/setup-app';
import { reportStart, reportWorkerStart } from './app/startup-report';

async function main(): Promise<void> {
  // The heap's growth, measured: docs/performance.md#memory.
  applyGcSettings();
  const config = configFromEnvironment('petstore');
  const worker = config.process.role === 'worker';
  // Nest's logger stays off until the app listens: a failure to start is the one line below.
  const app = await (worker ? createWorker : createApp)(config, { logger: false });
  enableGracefulShutdown(app, config.shutdown);
  await app.listen(worker ? config.process.healthPort : config.http.port, config.http.host);
  app.useLogger(app.get(PinoNestLogger));
  (worker ? reportWorkerStart : reportStart)(app, config);
}

main().catch((error: unknown) => {
  console.error(`petstore: could not start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
