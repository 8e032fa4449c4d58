import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import type {
  HeaderObject,
  OpenAPIObject,
  OperationObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';

export const OPENAPI_FILE = join(__dirname, '..', '..', 'openapi.yaml');

/** The committed document as written (references kept). */
export async function committedDocument(): Promise<OpenAPIObject> {
  return (await SwaggerParser.parse(OPENAPI_FILE)) as unknown as OpenAPIObject;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** One operation of the document, with where it is. */
export interface DocumentedOperation {
  /** Upper case, as in a request: `GET`. */
  method: string;
  /** The path as the document writes it: `/pets/{petId}`. */
  template: string;
  operation: OperationObject;
}

/** Every operation of the document, in its order. */
export function operationsOf(document: OpenAPIObject): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([template, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      method: method.toUpperCase(),
      template,
      operation: item[method] as OperationObject,
    })),
  );
}

/** Whether a path is one of the prefixes or below one: `/pets` covers `/pets/{petId}`, not `/petsitters`. */
export function isUnder(template: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => template === prefix || template.startsWith(`${prefix}/`));
}

/** The codes an operation's `default` response names in its examples: what the HTTP layer refuses. */
function defaultCodes(operation: OperationObject): string[] {
  const media = (operation.responses.default as ResponseObject | undefined)?.content?.['application/json'];
  return Object.values(media?.examples ?? {}).map(
    (example) => (example as { value: { code: string } }).value.code,
  );
}

/**
 * Ajv as OpenAPI 3.0 schemas need it: strict, with OpenAPI's formats (int64's ends judged in
 * double precision, as a JavaScript client reads them) and its annotation keywords, each schema
 * compiled once.
 */
export class OpenApiSchemas {
  private readonly ajv = new Ajv({ strict: true, allErrors: true });
  private readonly compiled = new Map<object, ValidateFunction>();

  constructor() {
    addFormats(this.ajv);
    this.ajv.addFormat('int64', {
      type: 'number',
      validate: (value: number) => Number.isInteger(value) && Math.abs(value) <= 2 ** 63,
    });
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (value: number) => Number.isInteger(value) && Math.abs(value) <= 2 ** 31,
    });
    // OpenAPI's annotation keywords, which JSON Schema does not know.
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator']);
  }

  /** What `value` breaks of `schema`, each problem prefixed with `at`; empty when valid. */
  problems(schema: SchemaObject, value: unknown, at: string): string[] {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${at}${error.instancePath} ${error.message ?? ''}`);
  }
}

interface CoveredOperation extends DocumentedOperation {
  matches: RegExp;
}

/**
 * Checks live responses against the committed document: the request's method and path must be a
 * documented operation, the status one of its documented responses, the body valid against that
 * response's schema (Ajv, strict, with OpenAPI's formats), and every documented header present
 * when required and valid when present. Records each (operation, status) it has checked.
 *
 * A validator covers the operations under the paths it is made for, so that each module's e2e
 * spec checks its own operations (`ContractValidator.forPaths('/widgets')`) and asserts that it
 * has seen every response they document (`unchecked()` is empty), without knowing of the others.
 */
export class ContractValidator {
  readonly seen = new Set<string>();
  /** Every (operation, status) pair the covered operations document, as `listPets 200`. */
  private readonly documented: readonly string[];
  private readonly schemas = new OpenApiSchemas();

  private constructor(
    private readonly prefixes: readonly string[],
    private readonly basePath: string,
    private readonly operations: CoveredOperation[],
  ) {
    this.documented = operations.flatMap(({ operation }) =>
      Object.keys(operation.responses).map((status) => `${operation.operationId} ${status}`),
    );
  }

  /**
   * A validator for the committed document's operations under these paths (`'/widgets'`: the
   * operations of `/widgets` and `/widgets/{widgetId}`), all their references resolved. Paths
   * are relative to the document's first server (`/v1`) unless an operation names its own.
   */
  static async forPaths(...prefixes: string[]): Promise<ContractValidator> {
    const document = (await SwaggerParser.dereference(OPENAPI_FILE)) as unknown as OpenAPIObject;
    const covered = operationsOf(document)
      .filter(({ template }) => isUnder(template, prefixes))
      .map((op) => ({ ...op, matches: new RegExp(`^${op.template.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));
    if (covered.length === 0)
      throw new Error(`openapi.yaml documents no operation under ${prefixes.join(', ')}`);
    return new ContractValidator(prefixes, document.servers?.[0]?.url ?? '', covered);
  }

  /** The covered (operation, status) pairs no checked response has shown yet; 403s are test/scopes.e2e-spec.ts's. */
  unchecked(): string[] {
    return this.documented.filter((response) => !this.seen.has(response) && !response.endsWith(' 403'));
  }

  /** Validates one response; returns what it was taken for, e.g. `getPet 404`. */
  check(res: Response): string {
    const request = (res as unknown as { req: { method: string; path: string } }).req;
    const path = request.path.split('?')[0];
    const prefix = this.basePath.replace(/\/$/, '');
    const found = this.operations.find(
      (op) =>
        op.method === request.method &&
        path.startsWith(`${prefix}/`) &&
        op.matches.test(path.slice(prefix.length)),
    );
    if (!found) {
      throw new Error(
        `${request.method} ${path} is not a documented operation under ${this.prefixes.join(', ')}`,
      );
    }

    const status = String(res.status) in found.operation.responses ? String(res.status) : 'default';
    if (
      status === 'default' &&
      !defaultCodes(found.operation).includes((res.body as { code?: string }).code!)
    ) {
      throw new Error(
        `${found.operation.operationId}: status ${res.status} is not documented (body: ${res.text})`,
      );
    }
    const name = `${found.operation.operationId} ${status}`;
    const response = found.operation.responses[status] as ResponseObject | undefined;
    if (!response) {
      throw new Error(`${name}: status ${res.status} is not documented (body: ${res.text})`);
    }

    const problems = [...this.bodyProblems(response, res), ...this.headerProblems(response, res)];
    if (problems.length > 0)
      throw new Error(`${name} does not match the document:\n- ${problems.join('\n- ')}`);
    this.seen.add(name);
    return name;
  }

  private bodyProblems(response: ResponseObject, res: Response): string[] {
    const media = response.content?.['application/json'];
    if (!media) return res.text ? [`an undocumented body: ${res.text}`] : [];
    const contentType = String(res.headers['content-type'] ?? '');
    if (!contentType.startsWith('application/json')) return [`Content-Type is "${contentType}", not JSON`];
    return this.schemas.problems(media.schema as SchemaObject, res.body, 'body');
  }

  private headerProblems(response: ResponseObject, res: Response): string[] {
    return Object.entries(response.headers ?? {}).flatMap(([name, definition]) => {
      const header = definition as HeaderObject;
      const value = res.headers[name.toLowerCase()] as string | undefined;
      if (value === undefined) return header.required ? [`required header ${name} is missing`] : [];
      return this.schemas.problems(header.schema as SchemaObject, value, `header ${name}: "${value}"`);
    });
  }
}
