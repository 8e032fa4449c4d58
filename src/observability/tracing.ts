import { existsSync } from 'node:fs';

/** Runs before the modules it instruments load, and before the configuration: it reads process.env. */
export function tracingRequested(env: Record<string, string | undefined>): boolean {
  if (/^true$/i.test(env.OTEL_SDK_DISABLED?.trim() ?? '')) return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (exporters.length > 0) return exporters.some((name) => name !== 'none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

let started = false;

export function startTracing(env: Record<string, string | undefined> = process.env): boolean {
  if (!started && tracingRequested(env)) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./tracing-sdk') as typeof import('./tracing-sdk')).startTracingSdk(env);
    started = true;
  }
  return started;
}

// The same `.env` the configuration reads (variables already set win), so OTEL_* may live there.
if (existsSync('.env')) process.loadEnvFile('.env');
startTracing();
