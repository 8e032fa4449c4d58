import { context, Span, trace } from '@opentelemetry/api';
import { ExpressInstrumentation, ExpressLayerType } from '@opentelemetry/instrumentation-express';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { NestInstrumentation } from '@opentelemetry/instrumentation-nestjs-core';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { ConsoleSpanExporter, SpanExporter } from '@opentelemetry/sdk-trace';
import { REDACTED, redactUrl } from './redact';
import { SqliteInstrumentation } from './sqlite-instrumentation';
import { registerTracing, SERVER_SPAN, SERVER_SPAN_IDS, TraceIds } from './tracing-state';

const DEFAULT_SERVICE_NAME = 'petstore-api';

function idsOf(span: Span | undefined): TraceIds | undefined {
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

const URL_ATTRIBUTES = new Set(['url.full', 'url.query', 'http.url', 'http.target']);
const SECRET_ATTRIBUTE = /authorization|cookie|api[-_.]?key|password|token|secret/i;

/** No credential leaves in a span: a net below instrumentations that record no headers or bodies. */
export function redactSpanAttributes(attributes: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (SECRET_ATTRIBUTE.test(name)) attributes[name] = REDACTED;
    else if (typeof value === 'string' && URL_ATTRIBUTES.has(name))
      attributes[name] = name === 'url.query' ? redactUrl(`?${value}`).slice(1) : redactUrl(value);
  }
}

function exporterFor(env: Record<string, string | undefined>, protocol: string): SpanExporter {
  const names = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim());
  if (names.includes('console') && !names.includes('otlp')) return new ConsoleSpanExporter();
  if (protocol === 'grpc') return new GrpcTraceExporter();
  if (protocol === 'http/json') return new JsonTraceExporter();
  return new ProtobufTraceExporter();
}

/** Traces only: metrics are Prometheus's, and log lines on stdout carry trace_id and span_id. */
export function startTracingSdk(env: Record<string, string | undefined>): void {
  const protocol =
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf';
  const exporter = exporterFor(env, protocol);
  const send = exporter.export.bind(exporter);
  exporter.export = (spans, done) => {
    for (const span of spans) redactSpanAttributes(span.attributes);
    send(spans, done);
  };
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) wins when set.
    serviceName:
      env.OTEL_SERVICE_NAME || /(^|,)\s*service\.name=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '')
        ? undefined
        : DEFAULT_SERVICE_NAME,
    traceExporter: exporter,
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        disableOutgoingRequestInstrumentation: true,
        requestHook: (span, request) => {
          if (!('headers' in request)) return;
          const traced = request as { [SERVER_SPAN_IDS]?: TraceIds; [SERVER_SPAN]?: Span };
          traced[SERVER_SPAN_IDS] = idsOf(span);
          traced[SERVER_SPAN] = span;
        },
      }),
      // Only for `http.route`: a span per Express layer costs more than it tells, beside Nest's spans.
      new ExpressInstrumentation({
        ignoreLayersType: [
          ExpressLayerType.MIDDLEWARE,
          ExpressLayerType.ROUTER,
          ExpressLayerType.REQUEST_HANDLER,
        ],
      }),
      new NestInstrumentation(),
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
      new SqliteInstrumentation(),
    ],
  });
  sdk.start();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  registerTracing({
    activeIds: () => idsOf(trace.getSpan(context.active())),
    shutdown: () => sdk.shutdown(),
    description: env.OTEL_TRACES_EXPORTER
      ? `exporter ${env.OTEL_TRACES_EXPORTER}${endpoint ? ` (${protocol} to ${endpoint})` : ''}`
      : `OTLP ${protocol} to ${endpoint}`,
  });
}
