import { readFileSync } from 'node:fs';
import SwaggerParser from '@apidevtools/swagger-parser';
import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  RequestBodyObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import request from 'supertest';
import { errorCodes, errorSpec, AnyErrorCode } from '../src/common/errors/error-codes';
import { CLEAN_TEXT_PATTERN } from '../src/common/validation/text.validators';
import { useApp, withApp } from './support/app';
import {
  committedDocument,
  DocumentedOperation,
  isUnder,
  OPENAPI_FILE,
  operationsOf,
} from './support/openapi';

const REGENERATE =
  'openapi.yaml is not the document the app serves: run `npm run openapi:export` and commit it.';

/** Runs an assertion, prefixing its failure with what to do about it. */
function withHint(hint: string, assertion: () => void): void {
  try {
    assertion();
  } catch (error) {
    if (error instanceof Error) error.message = `${hint}\n\n${error.message}`;
    throw error;
  }
}

const SCHEMAS = '#/components/schemas/';
const ERROR_REF = { $ref: `${SCHEMAS}Error` };

/** The named schemas a part of the document uses, directly or through other named schemas. */
function schemasUsedBy(
  node: unknown,
  schemas: Record<string, SchemaObject>,
  used = new Set<string>(),
): Set<string> {
  if (node === null || typeof node !== 'object') return used;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith(SCHEMAS)) {
    const name = ref.slice(SCHEMAS.length);
    if (!used.has(name)) {
      used.add(name);
      schemasUsedBy(schemas[name], schemas, used);
    }
  }
  Object.values(node).forEach((value) => schemasUsedBy(value, schemas, used));
  return used;
}

/** `GET /pets (listPets)`. */
const nameOf = ({ method, template, operation }: DocumentedOperation): string =>
  `${method} ${template} (${operation.operationId})`;

describe('The OpenAPI document (e2e)', () => {
  const api = useApp();
  let document: OpenAPIObject;

  beforeAll(async () => {
    document = await committedDocument();
  });

  const operation = (path: string, method: 'get' | 'post' | 'patch'): OperationObject =>
    document.paths[path][method] as OperationObject;
  /** The operations of one module: those under its paths, whatever other modules the document has. */
  const operationsUnder = (prefix: string): DocumentedOperation[] =>
    operationsOf(document).filter(({ template }) => isUnder(template, [prefix]));
  const petOperations = (): OperationObject[] => operationsUnder('/pets').map((op) => op.operation);
  const namedSchemas = (): Record<string, SchemaObject> =>
    document.components?.schemas as Record<string, SchemaObject>;
  /** The named schemas the pets operations use. */
  const petSchemas = (): string[] =>
    [...schemasUsedBy(petOperations(), namedSchemas())].sort((a, b) => a.localeCompare(b));

  describe('is the committed openapi.yaml', () => {
    it('byte for byte at /docs-yaml', async () => {
      const served = await request(api.http).get('/docs-yaml');
      expect(served.status).toBe(200);
      withHint(REGENERATE, () => expect(served.text).toBe(readFileSync(OPENAPI_FILE, 'utf8')));
    });

    it('as the same object at /docs-json', async () => {
      const served = await request(api.http).get('/docs-json');
      expect(served.status).toBe(200);
      withHint(REGENERATE, () => expect(served.body).toEqual(document));
    });

    it('is public: no API key is needed to read it', async () => {
      const res = await request(api.http).get('/docs-json');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    });

    it('Swagger UI is served with a page CSP that keeps its own scripts on http; the API with the API policy', async () => {
      const page = await request(api.http).get('/docs');
      expect(page.status).toBe(200);
      const docsPolicy = String(page.headers['content-security-policy']);
      expect(docsPolicy).toContain("script-src 'self'");
      expect(docsPolicy).not.toContain('upgrade-insecure-requests');
      const pets = await request(api.http).get('/v1/pets');
      expect(pets.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    });
  });

  it('passes a real OpenAPI validator (swagger-parser: schema and spec) with no errors', async () => {
    const validated = await SwaggerParser.validate(OPENAPI_FILE);
    expect(validated).toHaveProperty('openapi', '3.0.0');
  });

  describe('says what the contract says', () => {
    it('info: title, version 1.0.0, and a description of authentication, errors, limits and the deprecation', () => {
      expect(document.openapi).toMatch(/^3\./);
      expect(document.info.title).toBe('Pet Store API');
      expect(document.info.version).toBe('1.0.0');
      const description = document.info.description ?? '';
      for (const heading of ['## Authentication', '## Errors', '## Limits', '## Deprecation']) {
        expect(description).toContain(heading);
      }
      for (const code of [
        'validation_failed',
        'invalid_json',
        'unauthorized',
        'not_found',
        'method_not_allowed',
        'payload_too_large',
        'unsupported_media_type',
        'internal_error',
      ]) {
        expect(description).toContain(`\`${code}\``);
      }
      const pets = document.tags?.find((tag) => tag.name === 'pets')?.description;
      expect(pets).toContain('5 December 2030');
      expect(description).toContain('16 KiB');
      expect(description).toContain('rate_limited');
      expect(description).toContain('Idempotency-Key');
    });

    it('servers: this instance first (relative, so it is stable and "Try it out" works), then production and staging', () => {
      expect(document.servers).toEqual([
        {
          url: '/v1',
          description: 'This instance (local to this document: the server that serves it)',
          'x-internal': false,
        },
        { url: 'https://api.petstore.example.com/v1', description: 'Production', 'x-internal': false },
        { url: 'https://staging-api.petstore.example.com/v1', description: 'Staging', 'x-internal': false },
      ]);
    });

    it('paths: /pets and /pets/{petId} for the animals; the probes are not API and stay out', () => {
      const under = (prefix: string) => Object.keys(document.paths).filter((path) => isUnder(path, [prefix]));
      expect(under('/pets')).toEqual(['/pets', '/pets/{petId}']);
      expect(under('/health')).toEqual([]);
    });

    it('takes the production and staging URLs from the configuration', async () => {
      const configured = {
        PRODUCTION_BASE_URL: 'https://pets.example.org/v1',
        STAGING_BASE_URL: 'https://staging.pets.example.org/v1',
      };
      const res = await withApp(configured, (app) => request(app.getHttpServer()).get('/docs-json'));
      expect(res.body.servers.map((server: { url: string }) => server.url)).toEqual([
        '/v1',
        'https://pets.example.org/v1',
        'https://staging.pets.example.org/v1',
      ]);
    });

    it('one bearer HTTP security scheme, applied globally and nowhere overridden', () => {
      expect(document.components?.securitySchemes).toEqual({
        bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      });
      expect(document.security).toEqual([{ bearer: [] }]);
      for (const op of petOperations()) expect(op.security).toBeUndefined();
    });

    it('operationIds exactly listPets, createPet, getPet and updatePet, each tagged pets and summarised; pets tags nothing else', () => {
      expect(operationsUnder('/pets').map(nameOf)).toEqual([
        'GET /pets (listPets)',
        'POST /pets (createPet)',
        'GET /pets/{petId} (getPet)',
        'PATCH /pets/{petId} (updatePet)',
      ]);
      for (const op of petOperations()) {
        expect(op.tags).toEqual(['pets']);
        expect(op.summary).toMatch(/\w/);
      }
      const taggedPets = operationsOf(document).filter((op) => op.operation.tags?.includes('pets'));
      expect(taggedPets.map((op) => op.operation)).toEqual(petOperations());
      expect(document.tags?.filter((tag) => tag.name === 'pets')).toEqual([
        { name: 'pets', description: expect.any(String) },
      ]);
    });

    it('named schemas Pet, NewPet, PetStatus and Error, with int64 formats and the bounds of decisions.md', () => {
      const schemas = document.components?.schemas as Record<string, SchemaObject>;
      expect(petSchemas()).toEqual([
        'Error',
        'ErrorCode',
        'ErrorDetail',
        'NewPet',
        'Pet',
        'PetPatch',
        'PetStatus',
      ]);
      expect(schemas.ErrorCode.enum).toEqual(errorCodes());
      expect(schemas.NewPet.additionalProperties).toBe(false);
      expect(schemas.PetStatus).toEqual({ type: 'string', enum: ['available', 'pending', 'sold'] });

      const int64 = { type: 'integer', format: 'int64', minimum: 1, maximum: 9007199254740991 };
      expect(schemas.Pet.required).toEqual(['id', 'name', 'categoryId']);
      expect(schemas.Pet.properties?.id).toMatchObject(int64);
      expect(schemas.Pet.properties?.categoryId).toMatchObject(int64);
      expect(schemas.NewPet.required).toEqual(['name', 'categoryId']);
      expect(Object.keys(schemas.NewPet.properties ?? {})).toEqual(['name', 'categoryId', 'status']);
      expect(schemas.NewPet.properties?.categoryId).toMatchObject(int64);
      expect(Object.keys(schemas.PetPatch.properties ?? {})).toEqual(['name', 'categoryId', 'status']);
      expect(schemas.PetPatch.required).toBeUndefined();
      for (const schema of [schemas.Pet, schemas.NewPet, schemas.PetPatch]) {
        expect(schema.properties?.name).toMatchObject({
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: CLEAN_TEXT_PATTERN,
        });
        if (schema !== schemas.PetPatch)
          expect(schema.properties?.status).toMatchObject({
            allOf: [{ $ref: '#/components/schemas/PetStatus' }],
          });
      }
      // A patch may send null (409 from the lifecycle): a PetStatus or null.
      expect(schemas.PetPatch.properties?.status).toMatchObject({
        type: 'string',
        nullable: true,
        anyOf: [{ $ref: '#/components/schemas/PetStatus' }, { enum: [null] }],
      });

      expect([...(schemas.Error.required ?? [])].sort()).toEqual(['code', 'message', 'status']);
      expect(schemas.Error.properties).toMatchObject({
        code: { allOf: [{ $ref: '#/components/schemas/ErrorCode' }] },
        message: { type: 'string' },
        status: { type: 'integer' },
      });
    });

    it('PetStatus is one referenced schema: its values appear nowhere else in the pets operations and schemas', () => {
      const inlined: string[] = [];
      const walk = (node: unknown, at: string): void => {
        if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${at}/${index}`));
        if (node === null || typeof node !== 'object') return;
        const record = node as Record<string, unknown>;
        if (Array.isArray(record.enum) && record.enum.includes('available')) inlined.push(at);
        Object.entries(record).forEach(([key, value]) => walk(value, `${at}/${key}`));
      };
      for (const { template, method, operation: op } of operationsUnder('/pets'))
        walk(op, `#/paths/${template}/${method.toLowerCase()}`);
      for (const name of petSchemas()) walk(namedSchemas()[name], `${SCHEMAS}${name}`);
      expect(inlined).toEqual(['#/components/schemas/PetStatus']);
      const statusParameter = (operation('/pets', 'get').parameters as ParameterObject[]).find(
        (parameter) => parameter.name === 'status',
      );
      expect(statusParameter?.schema).toEqual({ $ref: '#/components/schemas/PetStatus' });
    });

    it('listPets: limit 1..100 default 20, an optional status filter, an optional cursor', () => {
      const parameters = operation('/pets', 'get').parameters as ParameterObject[];
      expect(parameters.map(({ name, in: where, required }) => ({ name, in: where, required }))).toEqual([
        { name: 'limit', in: 'query', required: false },
        { name: 'status', in: 'query', required: false },
        { name: 'cursor', in: 'query', required: false },
      ]);
      expect(parameters[0].schema).toEqual({
        type: 'integer',
        format: 'int32',
        minimum: 1,
        maximum: 100,
        default: 20,
      });
    });

    it('getPet: petId an int64 path parameter; deprecated, naming the replacement and the date', () => {
      const getPet = operation('/pets/{petId}', 'get');
      expect(getPet.parameters).toEqual([
        expect.objectContaining({
          name: 'petId',
          in: 'path',
          required: true,
          schema: { type: 'integer', format: 'int64' },
        }),
      ]);
      expect(getPet.deprecated).toBe(true);
      expect(getPet.description).toContain('5 December 2030');
      expect(getPet.description).toContain('listPets');
      expect(getPet.description).toContain('`status` filter');
      expect(operation('/pets', 'get').deprecated).toBeUndefined();
      expect(operation('/pets', 'post').deprecated).toBeUndefined();
      expect(operation('/pets/{petId}', 'patch').deprecated).toBeUndefined();
    });

    it.each([
      ['/pets', 'get', ['200', '400', '401', '403', '429', '500', '503']],
      ['/pets', 'post', ['201', '400', '401', '403', '409', '413', '415', '422', '429', '500', '503']],
      ['/pets/{petId}', 'get', ['200', '400', '401', '403', '404', '429', '500', '503']],
      [
        '/pets/{petId}',
        'patch',
        ['200', '400', '401', '403', '404', '409', '412', '413', '415', '428', '429', '500', '503'],
      ],
    ] as const)('%s %s documents exactly the statuses %j', (path, method, statuses) => {
      const responses = operation(path, method).responses as Record<string, ResponseObject>;
      expect(Object.keys(responses)).toEqual([...statuses, 'default']);
      for (const status of statuses.filter((status) => status >= '400')) {
        expect(responses[status].content?.['application/json'].schema).toEqual(ERROR_REF);
        expect(responses[status].description).toMatch(/`[a-z_]+`/);
      }
      const headers = responses['401'].headers as Record<string, HeaderObject>;
      expect(headers['WWW-Authenticate']).toMatchObject({ required: true });
    });

    it('the success bodies: Pets (an array of Pet) for listPets, Pet for createPet and getPet', () => {
      const body = (path: string, method: 'get' | 'post', status: string) =>
        (operation(path, method).responses[status] as ResponseObject).content?.['application/json'].schema;
      expect(body('/pets', 'get', '200')).toEqual({
        type: 'array',
        maxItems: 100,
        items: { $ref: '#/components/schemas/Pet' },
      });
      expect(body('/pets', 'post', '201')).toEqual({ $ref: '#/components/schemas/Pet' });
      expect(body('/pets/{petId}', 'get', '200')).toEqual({ $ref: '#/components/schemas/Pet' });
      expect(operation('/pets', 'post').requestBody).toMatchObject({
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/NewPet' } } },
      });
    });

    it('headers: Location and ETag on 201, ETag on get and change, Deprecation, Sunset and Link on every response getPet itself answers', () => {
      const created = operation('/pets', 'post').responses['201'] as ResponseObject;
      expect(Object.keys(created.headers ?? {}).sort()).toEqual([
        'Access-Control-Allow-Origin',
        'ETag',
        'Idempotent-Replayed',
        'Location',
        'RateLimit',
        'RateLimit-Policy',
        'X-Request-Id',
      ]);
      // `default` is what the HTTP layer refuses before the operation (and its headers) runs.
      const { default: _protocol, ...operationResponses } = operation('/pets/{petId}', 'get').responses;
      for (const [status, response] of Object.entries(operationResponses)) {
        const headers = (response as ResponseObject).headers ?? {};
        expect({ status, headers: Object.keys(headers) }).toEqual({
          status,
          headers: expect.arrayContaining(['Deprecation', 'Sunset', 'Link']),
        });
      }
      expect((created.headers?.ETag as HeaderObject).required).toBe(false);
      for (const method of ['get', 'patch'] as const) {
        const etag = (operation('/pets/{petId}', method).responses['200'] as ResponseObject).headers?.ETag;
        expect(etag).toMatchObject({ required: true, schema: { pattern: '^"[1-9][0-9]{0,18}"$' } });
      }
      const sunset = (operation('/pets/{petId}', 'get').responses['200'] as ResponseObject).headers?.Sunset;
      expect((sunset as HeaderObject).schema).toEqual({
        type: 'string',
        enum: ['Thu, 05 Dec 2030 00:00:00 GMT'],
      });
    });
  });

  /**
   * What every operation must say, whichever module it belongs to: these hold a new module to the
   * conventions without naming it. Each test lists every operation that breaks its rule.
   */
  describe('every operation of every module', () => {
    /** The operations served under the document's servers (`/v1`), not on their own as the probes are. */
    const apiOperations = () => operationsOf(document).filter((op) => op.operation.servers === undefined);
    const isPublic = (op: OperationObject) => op.security?.length === 0;
    const responsesOf = (op: OperationObject) => op.responses as Record<string, ResponseObject>;
    const hasRequiredHeader = (response: ResponseObject | undefined, name: string) =>
      (response?.headers?.[name] as HeaderObject | undefined)?.required === true;
    /**
     * Every requirement an operation breaks, as `GET /widgets (listWidgets) breaks: 429 with
     * Retry-After`; `requirements` names each one an operation has and says whether it holds.
     */
    const breaches = (
      operations: DocumentedOperation[],
      requirements: (op: OperationObject, method: string) => Record<string, boolean>,
    ): string[] =>
      operations.flatMap((op) =>
        Object.entries(requirements(op.operation, op.method))
          .filter(([, holds]) => !holds)
          .map(([requirement]) => `${nameOf(op)} breaks: ${requirement}`),
      );
    const duplicates = (names: (string | undefined)[]) =>
      names.filter((name, index) => names.indexOf(name) !== index);

    it('has a unique camelCase operationId, exactly one tag, a summary and a success response', () => {
      expect(duplicates(operationsOf(document).map((op) => op.operation.operationId))).toEqual([]);
      const problems = breaches(operationsOf(document), (op) => ({
        'a camelCase operationId': /^[a-z][A-Za-z0-9]*$/.test(op.operationId ?? ''),
        'exactly one tag': op.tags?.length === 1,
        'a summary': /\w/.test(op.summary ?? ''),
        'a 2xx response': Object.keys(op.responses).some((status) => /^2\d\d$/.test(status)),
      }));
      expect(problems).toEqual([]);
    });

    it('each callback (a webhook delivery) has a summary, a description and a 4xx: the 410 that turns it off', () => {
      const deliveries = operationsOf(document).flatMap((op) =>
        Object.values(op.operation.callbacks ?? {}).flatMap((callback) =>
          Object.values(callback as Record<string, { post: OperationObject }>).map((item) => item.post),
        ),
      );
      expect(deliveries).toHaveLength(1);
      for (const delivery of deliveries) {
        expect(delivery.summary).toMatch(/\w/);
        expect(delivery.description).toMatch(/\w/);
        expect(Object.keys(delivery.responses)).toEqual(['200', '410']);
      }
    });

    it('under /v1, has a tag the document declares with a description; every declared tag is used', () => {
      const declared = document.tags ?? [];
      const names = declared.map((tag) => tag.name);
      expect(duplicates(names)).toEqual([]);
      expect(declared.filter((tag) => !/\w/.test(tag.description ?? '')).map((tag) => tag.name)).toEqual([]);
      const used = new Set(operationsOf(document).flatMap((op) => op.operation.tags ?? []));
      expect(names.filter((name) => !used.has(name))).toEqual([]);
      const problems = breaches(apiOperations(), (op) => ({
        'a tag declared in the document': (op.tags ?? []).every((tag) => names.includes(tag)),
      }));
      expect(problems).toEqual([]);
    });

    it('needs the bearer key unless public: 401, 429 and 503 (keys are looked up), each with its header', () => {
      const problems = breaches(operationsOf(document), (op): Record<string, boolean> => {
        const responses = responsesOf(op);
        if (isPublic(op)) return { 'no 401 or 429 when public': !responses['401'] && !responses['429'] };
        return {
          'the global bearer requirement, not one of its own': op.security === undefined,
          '401 with WWW-Authenticate': hasRequiredHeader(responses['401'], 'WWW-Authenticate'),
          '429 with Retry-After': hasRequiredHeader(responses['429'], 'Retry-After'),
          '503 with Retry-After': hasRequiredHeader(responses['503'], 'Retry-After'),
        };
      });
      expect(problems).toEqual([]);
    });

    it('under /v1, documents 500; 400 when it takes a body, path or query parameters; 404 with a path parameter; 413 and 415 with a body', () => {
      const problems = breaches(apiOperations(), (op) => {
        const takes = new Set(
          (op.parameters as ParameterObject[] | undefined)?.map((parameter) => parameter.in),
        );
        const needs = [
          '500',
          ...(op.requestBody || takes.has('path') || takes.has('query') ? ['400'] : []),
          ...(takes.has('path') ? ['404'] : []),
          ...(op.requestBody ? ['413', '415'] : []),
        ];
        return Object.fromEntries(needs.map((status) => [`a ${status} response`, status in op.responses]));
      });
      expect(problems).toEqual([]);
    });

    it('speaks JSON only; every error is the Error schema; under /v1 with an example of its status and its code named', () => {
      const api = new Set(apiOperations().map((op) => op.operation));
      const problems = breaches(operationsOf(document), (op, method) => {
        const body = op.requestBody as RequestBodyObject | undefined;
        const bodyType = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
        const requirements: Record<string, boolean> = {
          'a request body in JSON only (a PATCH: a JSON merge patch)':
            !body || Object.keys(body.content).join() === bodyType,
        };
        for (const [status, response] of Object.entries(responsesOf(op))) {
          const media = Object.keys(response.content ?? {});
          requirements[`${status}: a status code`] = /^[1-5]\d\d$/.test(status) || status === 'default';
          requirements[`${status}: a description`] = /\w/.test(response.description);
          requirements[`${status}: JSON only`] = media.length === 0 || media.join() === 'application/json';
          if (status < '400' && status !== 'default') continue;
          const json = response.content?.['application/json'];
          requirements[`${status}: the Error schema`] =
            JSON.stringify(json?.schema) === JSON.stringify(ERROR_REF);
          if (!api.has(op)) continue;
          const examples = (
            json?.example
              ? [json.example]
              : Object.values(json?.examples ?? {}).map((example) => (example as { value: unknown }).value)
          ) as Array<{ code?: unknown; status?: unknown }>;
          requirements[`${status}: an example with its status and code`] =
            examples.length > 0 &&
            examples.every(
              (example) =>
                (status === 'default' ? Number(example.status) >= 400 : example.status === Number(status)) &&
                typeof example.code === 'string' &&
                errorCodes().includes(example.code as AnyErrorCode) &&
                errorSpec(example.code as AnyErrorCode).status === example.status,
            );
          requirements[`${status}: a description naming its code`] = /`[a-z_]+`/.test(response.description);
        }
        return requirements;
      });
      expect(problems).toEqual([]);
    });

    it('uses every named schema the document declares', () => {
      const used = schemasUsedBy(document.paths, namedSchemas());
      expect(Object.keys(namedSchemas()).filter((name) => !used.has(name))).toEqual([]);
    });

    it('states a type beside every nullable, so that OpenAPI 3.0 tools let null through', () => {
      const untyped: string[] = [];
      const walk = (node: unknown, at: string): void => {
        if (node === null || typeof node !== 'object') return;
        const record = node as Record<string, unknown>;
        if (record.nullable === true && record.type === undefined) untyped.push(at);
        Object.entries(record).forEach(([key, value]) => walk(value, `${at}/${key}`));
      };
      walk(document, '#');
      expect(untyped).toEqual([]);
    });
  });
});
