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

interface DocumentedOperation {
  method: string;
  template: string;
  matches: RegExp;
  operation: OperationObject;
}

/** Every documented (operation, status) pair, as `listPets 200`. */
export function documentedResponses(document: OpenAPIObject): string[] {
  return Object.values(document.paths).flatMap((item) =>
    METHODS.flatMap((method) => {
      const operation = item[method];
      return operation
        ? Object.keys(operation.responses).map((status) => `${operation.operationId} ${status}`)
        : [];
    }),
  );
}

/**
 * Checks live responses against the committed document: the request's method and path must be a
 * documented operation, the status one of its documented responses, the body valid against that
 * response's schema (Ajv, strict, with OpenAPI's formats), and every documented header present
 * when required and valid when present. Records each (operation, status) it has checked.
 */
export class ContractValidator {
  readonly seen = new Set<string>();
  private readonly ajv = new Ajv({ strict: true, allErrors: true });
  private readonly validators = new Map<object, ValidateFunction>();

  private constructor(
    private readonly basePath: string,
    private readonly operations: DocumentedOperation[],
  ) {
    addFormats(this.ajv);
    this.ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isInteger(value) });
    this.ajv.addFormat('int32', {
      type: 'number',
      validate: (value: number) => Number.isInteger(value) && Math.abs(value) <= 2 ** 31,
    });
    // OpenAPI's annotation keywords, which JSON Schema does not know.
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator']);
  }

  /** Builds a validator from the committed document, all its references resolved. */
  static async fromCommittedDocument(basePath = '/v1'): Promise<ContractValidator> {
    const document = (await SwaggerParser.dereference(OPENAPI_FILE)) as unknown as OpenAPIObject;
    const operations = Object.entries(document.paths).flatMap(([template, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({
        method: method.toUpperCase(),
        template,
        matches: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        operation: item[method] as OperationObject,
      })),
    );
    return new ContractValidator(basePath, operations);
  }

  /** Validates one response; returns what it was taken for, e.g. `getPet 404`. */
  check(res: Response): string {
    const request = (res as unknown as { req: { method: string; path: string } }).req;
    const path = request.path.split('?')[0];
    // An operation's own `servers` (the health probes: `/`) override the document's base path.
    const base = (op: DocumentedOperation) =>
      (op.operation.servers?.[0]?.url ?? this.basePath).replace(/\/$/, '');
    const found = this.operations.find((op) => {
      const prefix = base(op);
      return (
        op.method === request.method &&
        path.startsWith(`${prefix}/`) &&
        op.matches.test(path.slice(prefix.length))
      );
    });
    if (!found) throw new Error(`${request.method} ${path} is not a documented operation`);

    const name = `${found.operation.operationId} ${res.status}`;
    const response = found.operation.responses[String(res.status)] as ResponseObject | undefined;
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
    const validate = this.validator(media.schema as SchemaObject);
    if (validate(res.body)) return [];
    return (validate.errors ?? []).map((error) => `body${error.instancePath} ${error.message ?? ''}`);
  }

  private headerProblems(response: ResponseObject, res: Response): string[] {
    return Object.entries(response.headers ?? {}).flatMap(([name, definition]) => {
      const header = definition as HeaderObject;
      const value = res.headers[name.toLowerCase()] as string | undefined;
      if (value === undefined) return header.required ? [`required header ${name} is missing`] : [];
      const problem = `header ${name}: "${value}"`;
      const validate = this.validator(header.schema as SchemaObject);
      return validate(value) ? [] : [`${problem} ${this.ajv.errorsText(validate.errors)}`];
    });
  }

  private validator(schema: SchemaObject): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(schema);
      this.validators.set(schema, validate);
    }
    return validate;
  }
}
