import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  PathItemObject,
  SchemaObject,
  ReferenceObject,
  RequestBodyObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { apiDescription } from './api-description';
import { resourceTags } from '../common/openapi/api-resource.decorator';
import {
  CORS_HEADER_DOCS,
  IDEMPOTENCY_KEY_HEADER,
  RATE_LIMIT_HEADER_DOCS,
  REPLAYED_HEADER_DOCS,
  REQUEST_ID_HEADER_DOCS,
  WEBHOOK_HEADER_DOCS,
} from '../common/openapi/headers';
import { insufficientScopeChallenge, insufficientScopeMessage } from '../common/errors/bearer-challenge';
import { errorCodes, errorSpec } from '../common/errors/error-codes';
import { collectionScope, SCOPE_FORMAT, SCOPES_EXTENSION } from '../common/scopes';
import { API_PREFIX } from '../common/resource-location';
import { AppConfig } from '../config/app-config';

const OPERATION_ID_SEPARATOR = '#';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/**
 * Paths without `/v1`; the first server is relative, so "Try it out" reaches this instance.
 * `tokenUrl`: the identity provider's token endpoint, where access tokens are accepted.
 */
export function buildOpenApiDocument(
  app: INestApplication,
  config: AppConfig,
  tokenUrl?: string,
): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Pet Store API')
    .setVersion('1.0.0')
    .setDescription(apiDescription(config.http))
    .setLicense('MIT', 'https://opensource.org/license/mit')
    .addServer(`/${API_PREFIX}`, 'This instance (local to this document: the server that serves it)')
    .addServer(config.docs.productionBaseUrl, 'Production')
    .addServer(config.docs.stagingBaseUrl, 'Staging')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key',
        description: 'An API key: `Authorization: Bearer <API key>`.',
      },
      'bearer',
    )
    .addSecurityRequirements('bearer');
  for (const [name, description] of resourceTags(app)) builder.addTag(name, description);
  const base = builder.build();
  base.info.contact = { name: 'Pet Store API team', url: new URL(config.docs.productionBaseUrl).origin };
  const document = SwaggerModule.createDocument(app, base, {
    ignoreGlobalPrefix: true,
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey}${OPERATION_ID_SEPARATOR}${methodKey}`,
  });
  nameOperations(document);
  declareHttpLayer(document, config);
  declareWebhookDeliveries(document);
  nullableReferences(document);
  if (tokenUrl !== undefined) declareAccessTokens(document, tokenUrl, config.auth.oidcScopePrefix);
  return document;
}

/**
 * A property that may be `null` beside a `$ref` to an enum (a merge patch's status) as OpenAPI 3.0
 * tools read it: `nullable` needs a `type` beside it, and the enum allows no `null` of its own.
 */
function nullableReferences(document: OpenAPIObject): void {
  const schemas = document.components?.schemas ?? {};
  for (const schema of Object.values(schemas) as SchemaObject[])
    for (const property of Object.values(schema.properties ?? {}) as SchemaObject[]) {
      const [reference, ...more] = property.allOf ?? [];
      if (!property.nullable || more.length > 0 || !reference || !('$ref' in reference)) continue;
      const target = schemas[reference.$ref.split('/').pop()!] as SchemaObject;
      delete property.allOf;
      property.type = target.type;
      const values = target.enum as string[];
      // What the enum says, again for lint rules that read no `anyOf`.
      property.maxLength = Math.max(...values.map((value) => value.length));
      property.pattern = `^(${values.join('|')})$`;
      property.anyOf = [reference, { enum: [null] }];
    }
}

/** Every callback is a webhook delivery: the Standard Webhooks headers, and what a 410 does. */
function declareWebhookDeliveries(document: OpenAPIObject): void {
  for (const { operation } of operationsOf(document))
    for (const callback of Object.values(operation.callbacks ?? {}))
      for (const item of Object.values(callback as Record<string, PathItemObject>)) {
        if (!item.post) continue;
        item.post.summary = 'Deliver an event';
        item.post.description =
          "What the service sends to the endpoint's URL for each event it takes: a signed POST, " +
          'retried with backoff for about a day until a 2xx answers.';
        item.post.parameters = WEBHOOK_HEADER_DOCS;
        item.post.responses['410'] = { description: 'Gone: the service turns the endpoint off.' };
      }
}

function operationsOf(document: OpenAPIObject) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item[method] ? [{ path, method, operation: item[method] }] : [])),
  );
}

/** The scope the key guard asks of the operation, in its description, `x-required-scopes` and its 403. */
function requireScope(operation: OperationObject, path: string, method: string): void {
  const extended = operation as OperationObject & { [SCOPES_EXTENSION]?: string[] };
  const [scope] = (extended[SCOPES_EXTENSION] ??= [
    collectionScope(path.split('/')[1], method.toUpperCase()),
  ]);
  operation.description = `${operation.description ?? ''}\n\nRequired scope: \`${scope}\`.`.trimStart();
  const { status } = errorSpec('insufficient_scope');
  // Integer keys enumerate in ascending order, so the 403 takes its place among the statuses.
  operation.responses[status] = {
    description: `The API key lacks the scope \`${scope}\` (\`insufficient_scope\`); \`WWW-Authenticate\` names it.`,
    // As the 401's (the rate limit's are added below): what runs before the guards (getPet's deprecation).
    headers: {
      ...(operation.responses['401'] as ResponseObject | undefined)?.headers,
      'WWW-Authenticate': {
        description: 'The bearer challenge naming the missing scope (RFC 6750).',
        required: true,
        // A pattern, not the one scope: an operation that grants scopes (keys) may name another.
        schema: {
          type: 'string',
          maxLength: 120,
          pattern: `^${insufficientScopeChallenge('(SCOPE)').replace('(SCOPE)', SCOPE_FORMAT.source.slice(1, -1))}$`,
          example: insufficientScopeChallenge(scope),
        },
      },
    },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { code: 'insufficient_scope', message: insufficientScopeMessage(scope), status },
      },
    },
  };
  if (!SCOPE_FORMAT.test(scope)) throw new Error(`${operation.operationId}: "${scope}" is not a scope`);
}

/** Each secured operation accepts a key or an access token with its scope, as the provider names it. */
function declareAccessTokens(document: OpenAPIObject, tokenUrl: string, prefix: string): void {
  const scopes: Record<string, string> = {};
  for (const { operation } of operationsOf(document)) {
    const [scope] = (operation as { [SCOPES_EXTENSION]?: string[] })[SCOPES_EXTENSION] ?? [];
    if (scope === undefined) continue;
    const [collection, access] = scope.split(':');
    scopes[prefix + scope] =
      `${access === 'read' ? 'Read' : access === 'write' ? 'Change' : 'Manage'} ${collection}`;
    operation.security = [{ bearer: [] }, { oauth2: [prefix + scope] }];
  }
  const schemes = document.components!.securitySchemes!;
  Object.assign(schemes.bearer, {
    description:
      "An API key, or an access token of the identity provider: `Authorization: Bearer <key or token>`; a token counts as a key with the token's scopes (rate limits per subject).",
  });
  schemes.oauth2 = {
    type: 'oauth2',
    description:
      "An access token (a JWT, RFC 9068) from the identity provider, with the operation's scope; " +
      "checked as RFC8725 advises: asymmetric algorithms of the issuer's keys only, `iss`, `aud`, `exp`.",
    flows: {
      clientCredentials: {
        tokenUrl,
        // The same endpoint takes refresh grants; tokens are short-lived.
        refreshUrl: tokenUrl,
        scopes: Object.fromEntries(Object.entries(scopes).sort()),
      },
    },
  };
}

/** Names operations after their handlers; a name two controllers share gets theirs (`ordersList`). */
export function nameOperations(document: OpenAPIObject): void {
  // Operations named with @ApiOperation({ operationId }) keep their name.
  const named = operationsOf(document).flatMap(({ operation }) => {
    const [controller, handler] = operation.operationId?.split(OPERATION_ID_SEPARATOR) ?? [];
    return handler === undefined
      ? []
      : [{ operation, resource: controller.replace(/Controller$/, ''), handler }];
  });
  for (const { operation, resource, handler } of named)
    operation.operationId =
      named.filter((other) => other.handler === handler).length === 1
        ? handler
        : `${resource.charAt(0).toLowerCase()}${resource.slice(1)}${handler.charAt(0).toUpperCase()}${handler.slice(1)}`;
}

/** What the HTTP layer does for every operation, which no controller declares. */
function declareHttpLayer(document: OpenAPIObject, config: AppConfig): void {
  const secured = (operation: OperationObject) =>
    (operation.security ?? document.security ?? []).some((scheme) => Object.keys(scheme).length > 0);
  for (const { path, method, operation } of operationsOf(document)) {
    if (secured(operation)) requireScope(operation, path, method);
    for (const [status, response] of Object.entries(operation.responses)) {
      // The key guard answers 401 before the rate limit counts; a 403 comes after it.
      const authenticated = secured(operation) && !['401', 'default'].includes(status);
      (response as ResponseObject).headers = {
        ...(response as ResponseObject).headers,
        ...(authenticated ? RATE_LIMIT_HEADER_DOCS : {}),
        ...REQUEST_ID_HEADER_DOCS,
        ...CORS_HEADER_DOCS,
      };
    }
    const parameterOf = (place: string, name: string) =>
      operation.parameters?.find(
        (parameter): parameter is ParameterObject =>
          'in' in parameter && parameter.in === place && parameter.name === name,
      );
    const page = (operation.responses['200'] as ResponseObject | undefined)?.content?.['application/json']
      ?.schema;
    const maximum = (parameterOf('query', 'limit')?.schema as SchemaObject | undefined)?.maximum;
    if (page && 'type' in page && page.type === 'array' && maximum !== undefined) page.maxItems = maximum;
    const created = operation.responses['201'] as ResponseObject | undefined;
    if (parameterOf('header', IDEMPOTENCY_KEY_HEADER) && created)
      created.headers = { ...created.headers, ...REPLAYED_HEADER_DOCS };
    const body = operation.requestBody as RequestBodyObject | undefined;
    if (!body) continue;
    body.description =
      `JSON in UTF-8 (a \`charset\` parameter, if any, is \`utf-8\`), at most ${config.http.bodyLimitBytes} bytes ` +
      'after any `Content-Encoding` (gzip, deflate or br) is undone; only the properties of its schema.';
    for (const media of Object.values(body.content)) {
      const ref = (media.schema as ReferenceObject | undefined)?.$ref;
      const schema = ref ? document.components?.schemas?.[ref.split('/').pop()!] : media.schema;
      if (schema && !('$ref' in schema)) schema.additionalProperties = false;
    }
  }
  for (const server of document.servers ?? []) Object.assign(server, { 'x-internal': false });
  // The codes modules declare too: they are declared once every module has loaded, after ErrorDto.
  const codes = document.components?.schemas?.ErrorCode;
  if (codes && !('$ref' in codes)) codes.enum = errorCodes();
}
