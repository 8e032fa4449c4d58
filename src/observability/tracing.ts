import { existsSync } from 'node:fs';

/**
 * The tracing bootstrap. It must run before any module it instruments (http, express, Nest,
 * pg, ioredis, sqlite3) is loaded: `main.ts` imports it first, and `node --require
 * ./dist/observability/tracing.js dist/main.js` works too (it starts once).
 *
 * Tracing is on only when the standard OpenTelemetry variables ask for it:
 * OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, or OTEL_TRACES_EXPORTER
 * set to something other than `none`; OTEL_SDK_DISABLED=true wins over both. Everything else is
 * read by the SDK itself from the OTEL_* variables. With tracing off not one OpenTelemetry
 * module is loaded.
 *
 * This file reads process.env itself, on purpose: it runs before the configuration is loaded,
 * and the SDK reads its OTEL_* variables there anyway.
 */
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

/** Starts tracing if the environment asks for it; returns whether it runs. */
export function startTracing(env: Record<string, string | undefined> = process.env): boolean {
  if (started) return true;
  if (!tracingRequested(env)) return false;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTracingSdk } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  startTracingSdk(env);
  started = true;
  return true;
}

// The same `.env` the configuration reads (variables already set win), so OTEL_* may live there.
if (existsSync('.env')) process.loadEnvFile('.env');
startTracing();
