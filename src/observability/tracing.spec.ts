/* eslint-disable @typescript-eslint/no-require-imports */
import { REDACTED } from './redact';

type TracingModule = typeof import('./tracing');

/** Loads tracing.ts afresh, with the SDK module replaced by a spy that records being loaded. */
function loadWithSpy(): { tracing: TracingModule; loaded: jest.Mock; started: jest.Mock } {
  const loaded = jest.fn();
  const started = jest.fn();
  jest.resetModules();
  jest.doMock('./tracing-sdk', () => {
    loaded();
    return { startTracingSdk: started };
  });
  return { tracing: require('./tracing') as TracingModule, loaded, started };
}

describe('tracing bootstrap', () => {
  afterEach(() => jest.dontMock('./tracing-sdk'));

  it.each([
    [{}],
    [{ OTEL_SERVICE_NAME: 'petstore-api', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '' }],
  ])('stays off, without loading the SDK or creating an exporter, for %j', (env) => {
    const { tracing, loaded, started } = loadWithSpy();
    expect(tracing.tracingRequested(env)).toBe(false);
    expect(tracing.startTracing(env)).toBe(false);
    expect(loaded).not.toHaveBeenCalled();
    expect(started).not.toHaveBeenCalled();
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }],
    [{ OTEL_TRACES_EXPORTER: 'console' }],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }],
  ])('starts the SDK once for %j', (env) => {
    const { tracing, started } = loadWithSpy();
    expect(tracing.startTracing(env)).toBe(true);
    expect(tracing.startTracing(env)).toBe(true);
    expect(started).toHaveBeenCalledTimes(1);
    expect(started).toHaveBeenCalledWith(env);
  });
});

describe('redactSpanAttributes', () => {
  const { redactSpanAttributes } = require('./tracing-sdk') as typeof import('./tracing-sdk');

  it('redacts key-like query parameters in URL attributes and credential-named attributes', () => {
    const attributes: Record<string, unknown> = {
      'url.full': '/v1/pets/1?api_key=secret-1&limit=5',
      'url.query': 'token=secret-2&status=sold',
      'http.target': '/v1/pets?password=secret-3',
      'url.path': '/v1/pets/1',
      'http.request.header.authorization': ['Bearer secret-4'],
      'http.response.status_code': 200,
    };
    redactSpanAttributes(attributes);
    expect(attributes).toEqual({
      'url.full': `/v1/pets/1?api_key=${REDACTED}&limit=5`,
      'url.query': `token=${REDACTED}&status=sold`,
      'http.target': `/v1/pets?password=${REDACTED}`,
      'url.path': '/v1/pets/1',
      'http.request.header.authorization': REDACTED,
      'http.response.status_code': 200,
    });
  });
});
