import { INestApplication, LoggerService, LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import helmet from 'helmet';
import { AppModule } from './app.module';
import { API_PREFIX } from './common/http/api-prefix';
import { jsonBody } from './common/http/json-body.middleware';
import { answerProtocolErrors, checkRequestHeaders } from './common/http/protocol-errors';
import { AppConfig } from './config/app-config';

export const DOCS_PATH = 'docs';

/** The OpenAPI document of the running app. Paths are written without `/v1`; servers end in it. */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const info = new DocumentBuilder()
    .setTitle('Pet Store API')
    .setVersion('1.0.0')
    .setDescription('List, add and get animals of the pet store catalogue. Every operation needs an API key.')
    .addServer(`/${API_PREFIX}`, 'This instance')
    .addServer(config.productionBaseUrl, 'Production')
    .addServer(config.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <API key>' },
      'bearer',
    )
    .addSecurityRequirements('bearer')
    .build();
  return SwaggerModule.createDocument(app, info, { ignoreGlobalPrefix: true });
}

/**
 * Everything about the HTTP pipeline that both `main.ts` and the tests need: security headers,
 * Error bodies for what Node's HTTP parser rejects, the JSON body parser and its limit, the `/v1`
 * prefix and the API docs at `/docs`.
 */
export function setupApp(app: NestExpressApplication, config: AppConfig): void {
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  answerProtocolErrors(app.getHttpServer());
  app.use(helmet());
  app.use(checkRequestHeaders);
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
