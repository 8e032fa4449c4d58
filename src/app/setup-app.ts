import { DynamicModule, LoggerService, LogLevel, RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule } from '@nestjs/swagger';
import type { DestinationStream, Logger } from 'pino';
import { AppModule } from './app.module';
import { AccessTokens } from '../auth/access-tokens';
import { ETAG_HEADER, IF_MATCH_HEADER, REQUEST_ID_HEADER } from '../common/openapi/headers';
import { API_PREFIX } from '../common/resource-location';
import { AppConfig } from '../config/app-config';
import { HEALTH_PATH } from '../health/health.controller';
import { ExpressServerAdapter } from '../http/express-server.adapter';
import { httpMetrics } from '../http/http-metrics';
import { jsonBody } from '../http/json-body.middleware';
import { answerProtocolErrors, checkRequestHeaders } from '../http/protocol-errors';
import { requestLog } from '../http/request-log';
import { RouteIndex } from '../http/route-index';
import { securityHeaders } from '../http/security-headers';
import { createRootLogger } from '../observability/logger';
import { buildOpenApiDocument } from '../openapi/openapi-document';
import { Metrics } from '../observability/metrics';
import { METRICS_PATH, MetricsListener } from '../observability/metrics-listener';
import { PinoNestLogger } from '../observability/nest-logger';
import { protectSecrets } from '../observability/redact';

export const DOCS_PATH = 'docs';

const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Idempotency-Key',
  IF_MATCH_HEADER,
  REQUEST_ID_HEADER,
];
const CORS_EXPOSED_HEADERS = [
  'Location',
  'Link',
  ETAG_HEADER,
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  REQUEST_ID_HEADER,
  'Deprecation',
  'Sunset',
];

export interface CreateAppOptions {
  logger?: LoggerService | LogLevel[] | false;
  /** Where the logs go instead of stdout, as JSON lines. */
  logDestination?: DestinationStream;
}

/** The module on Express; silent while it is built: the caller reports a start-up failure as one line. */
async function build(
  module: (config: AppConfig, logger: Logger) => DynamicModule,
  config: AppConfig,
  options: CreateAppOptions,
): Promise<{ app: NestExpressApplication; logger: Logger }> {
  const logger = createRootLogger(config, options.logDestination);
  const app = await NestFactory.create<NestExpressApplication>(
    module(config, logger),
    new ExpressServerAdapter(config.http),
    { bodyParser: false, abortOnError: false, logger: false },
  );
  app.useLogger(options.logger ?? app.get(PinoNestLogger));
  protectSecrets(config.auth.apiKeys);
  app.disable('x-powered-by');
  // Answers are `no-store`: a hashed ETag would only cost time (versioned resources send their own).
  app.set('etag', false);
  return { app, logger };
}

/** A delivery worker (`PROCESS_ROLE=worker`): its probes and `/metrics`, on `HEALTH_PORT` only. */
export async function createWorker(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  const { app } = await build((...args) => AppModule.forWorker(...args), config, options);
  app.use(securityHeaders(DOCS_PATH));
  const metrics = app.get(MetricsListener);
  app.getHttpAdapter().getInstance().get(METRICS_PATH, metrics.serve);
  return app;
}

/** The application exactly as it runs; request ids and the log first, so every answer has them. */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  const { app, logger } = await build((...args) => AppModule.forRoot(...args), config, options);
  app.set('query parser', 'simple');
  answerProtocolErrors(app.getHttpServer(), (fields, message) => logger.warn(fields, message));
  app.set('trust proxy', config.http.trustProxy);
  app.use(requestLog(logger));
  const metrics = app.get(Metrics);
  if (metrics.enabled) app.use(httpMetrics(metrics));
  const tokenUrl = app.get(AccessTokens, { strict: false })?.tokenEndpoint;
  app.use(securityHeaders(DOCS_PATH, tokenUrl));
  const routes = new RouteIndex(app.getHttpAdapter().getInstance());
  // A preflight allows the methods the asked path really has.
  if (config.http.corsOrigins.length > 0)
    app.enableCors((req: { path: string }, callback) =>
      callback(null, {
        origin: [...config.http.corsOrigins],
        methods: routes.allowedMethods(req.path),
        allowedHeaders: CORS_ALLOWED_HEADERS,
        exposedHeaders: CORS_EXPOSED_HEADERS,
        maxAge: 600,
      }),
    );
  app.use(checkRequestHeaders);
  app.use(jsonBody(config.http.bodyLimitBytes, routes));
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [{ path: `${HEALTH_PATH}/{*probe}`, method: RequestMethod.GET }],
  });
  if (config.docs.swaggerEnabled)
    SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app, config, tokenUrl), {
      jsonDocumentUrl: `${DOCS_PATH}-json`,
      yamlDocumentUrl: `${DOCS_PATH}-yaml`,
      // Swagger UI would keep an OAuth client's secret in localStorage with the rest.
      swaggerOptions: { persistAuthorization: tokenUrl === undefined },
    });
  return app;
}
