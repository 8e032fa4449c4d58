import { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { RequestHandler } from 'express';
import helmet from 'helmet';
import { apiDescription } from './api-description';
import { AppModule } from './app.module';
import { API_PREFIX } from './common/http/api-prefix';
import { jsonBody } from './common/http/json-body.middleware';
import { AppConfig } from './config/app-config';

export const DOCS_PATH = 'docs';

/**
 * The OpenAPI document of the running app. Paths are written without `/v1`; servers end in it.
 * The first server is relative, so it is this instance wherever it runs ("Try it out" works)
 * and the document stays the same on every host and port.
 */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const info = new DocumentBuilder()
    .setTitle('Pet Store API')
    .setVersion('1.0.0')
    .setDescription(apiDescription(config))
    .addServer(`/${API_PREFIX}`, 'This instance')
    .addServer(config.productionBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key',
        description: 'An API key: `Authorization: Bearer <API key>`.',
      },
      'bearer',
    )
    .addSecurityRequirements('bearer')
    .addTag('Pets', 'The animals of the catalogue.')
    .build();
  return SwaggerModule.createDocument(app, info, {
    ignoreGlobalPrefix: true,
    // The contract's operation names are the handlers' names: listPets, createPet, getPet.
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
  });
}

/**
 * helmet's defaults everywhere, except that the Swagger UI page does not ask the browser to
 * upgrade its requests to https: served over plain http from any host but localhost, that
 * directive makes the browser fetch the UI's own scripts over https, and the page stays blank.
 */
function securityHeaders(): RequestHandler {
  const everywhere = helmet();
  const docsPage = helmet({ contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } });
  return (req, res, next) =>
    req.path === `/${DOCS_PATH}` || req.path.startsWith(`/${DOCS_PATH}/`)
      ? docsPage(req, res, next)
      : everywhere(req, res, next);
}

/**
 * Everything about the HTTP pipeline that both `main.ts` and the tests need: security headers,
 * the JSON body parser and its limit, the `/v1` prefix and the API docs at `/docs`.
 */
export function setupApp(app: NestExpressApplication, config: AppConfig): void {
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(securityHeaders());
  app.use(jsonBody(config.bodyLimitBytes));
  app.setGlobalPrefix(API_PREFIX);
  SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app, config), {
    jsonDocumentUrl: `${DOCS_PATH}-json`,
    yamlDocumentUrl: `${DOCS_PATH}-yaml`,
    swaggerOptions: { persistAuthorization: true },
  });
}

export interface CreateAppOptions {
  logger?: LoggerService | LogLevel[] | false;
}

/** Builds the application exactly as it runs: the same module, options and pipeline. */
export async function createApp(
  config: AppConfig,
  options: CreateAppOptions = {},
): Promise<NestExpressApplication> {
  // Silent while the module is built: a start-up failure is reported once, by the caller,
  // as one line instead of a framework stack trace.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    abortOnError: false,
    logger: false,
  });
  app.useLogger(options.logger ?? ['error', 'warn']);
  setupApp(app, config);
  return app;
}
