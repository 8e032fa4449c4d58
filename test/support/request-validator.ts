import { isUtf8 } from 'node:buffer';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import SwaggerParser from '@apidevtools/swagger-parser';
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  RequestBodyObject,
  SchemaObject,
} from '@nestjs/swagger';
import { OpenApiSchemas, OPENAPI_FILE, operationsOf } from './openapi';

export interface PlainRequest {
  method: string;
  /** As sent: path and query, percent-encoded. */
  url: string;
  headers: Record<string, string>;
  body?: Buffer;
}

const DECODERS: Record<string, (body: Buffer) => Buffer> = {
  identity: (body) => body,
  gzip: gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * Whether the committed document calls a request valid, judged as a client generator or a
 * validating proxy would: the operation by method and path (case-sensitive, no trailing slash),
 * parameters decoded as OpenAPI's `form` and `simple` styles say (an integer written in decimal
 * digits) and checked against their schemas, the body against its schema, all with Ajv
 * (`OpenApiSchemas`) in Unicode mode. Four rules of the body come from the document's text, since no schema can state
 * them: a body, on any operation, is JSON; a `charset` is utf-8; the size limit in bytes after
 * any `Content-Encoding` (gzip, deflate, br) is undone; and the bytes are UTF-8.
 */
export class RequestValidator {
  private readonly schemas = new OpenApiSchemas();

  private constructor(
    private readonly document: OpenAPIObject,
    private readonly bodyLimit: number,
  ) {}

  static async load(): Promise<RequestValidator> {
    const document = (await SwaggerParser.dereference(OPENAPI_FILE)) as unknown as OpenAPIObject;
    const stated = operationsOf(document)
      .map(({ operation }) => (operation.requestBody as RequestBodyObject | undefined)?.description ?? '')
      .map((text) => /at most (\d+) bytes/.exec(text)?.[1])
      .find((limit) => limit !== undefined);
    if (stated === undefined) throw new Error('openapi.yaml states no body size limit');
    return new RequestValidator(document, Number(stated));
  }

  /** What breaks the document; empty when the document calls the request valid. */
  problems(request: PlainRequest): string[] {
    const [rawPath, rawQuery = ''] = request.url.split(/\?(.*)/s);
    const base = this.document.servers?.[0]?.url ?? '';
    if (!rawPath.startsWith(`${base}/`)) return [`${rawPath} is not under ${base}`];
    const segments = rawPath.slice(base.length).split('/');
    for (const { method, template, operation } of operationsOf(this.document)) {
      if (method !== request.method) continue;
      const names = template.split('/');
      if (names.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const matches = names.every((name, index) => {
        const parameter = /^\{(.+)\}$/.exec(name)?.[1];
        if (parameter === undefined) return name === segments[index];
        params[parameter] = segments[index];
        return segments[index] !== '';
      });
      if (matches) return this.operationProblems(operation, params, rawQuery, request);
    }
    return [`no documented operation is ${request.method} ${rawPath}`];
  }

  private operationProblems(
    operation: OperationObject,
    pathParams: Record<string, string>,
    rawQuery: string,
    request: PlainRequest,
  ): string[] {
    const query = new Map<string, string[]>();
    for (const pair of rawQuery === '' ? [] : rawQuery.split('&')) {
      const [name, value = ''] = pair.split(/=(.*)/s);
      const decodedName = decodeOrUndefined(name);
      if (decodedName !== undefined) query.set(decodedName, [...(query.get(decodedName) ?? []), value]);
    }
    const headers = new Map(
      Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]),
    );
    const problems: string[] = [];
    for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
      const schema = parameter.schema as SchemaObject;
      const values =
        parameter.in === 'path'
          ? [pathParams[parameter.name]]
          : parameter.in === 'query'
            ? query.get(parameter.name)
            : parameter.in === 'header' && headers.has(parameter.name.toLowerCase())
              ? [headers.get(parameter.name.toLowerCase())!]
              : undefined;
      if (values === undefined) {
        if (parameter.required) problems.push(`${parameter.name} is required`);
        continue;
      }
      if (values.length > 1) {
        problems.push(`${parameter.name} is given ${values.length} times`);
        continue;
      }
      const text =
        parameter.in === 'header' ? values[0] : decodeOrUndefined(values[0], parameter.in === 'query');
      if (text === undefined) {
        problems.push(`${parameter.name} is not percent-encoded UTF-8`);
        continue;
      }
      const value = schema.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
      problems.push(...this.schemas.problems(schema, value, parameter.name));
    }
    return [...problems, ...this.bodyProblems(operation, request)];
  }

  private bodyProblems(operation: OperationObject, request: PlainRequest): string[] {
    const declared = operation.requestBody as RequestBodyObject | undefined;
    const header = (name: string) =>
      Object.entries(request.headers).find(([key]) => key.toLowerCase() === name)?.[1];
    if (!request.body || request.body.length === 0) return declared?.required ? ['the body is required'] : [];
    const [mediaType, ...parameters] = (header('content-type') ?? '').split(';');
    const type = mediaType.trim().toLowerCase();
    const media = declared ? declared.content[type] : type === 'application/json' ? {} : undefined;
    if (!media) return [`a body of type "${type}" is not JSON`];
    const charset = parameters
      .map((parameter) => parameter.trim().split('='))
      .find(([name]) => name.toLowerCase() === 'charset')?.[1];
    if (charset !== undefined && !/^"?utf-8"?$/i.test(charset)) return [`charset ${charset} is not utf-8`];
    const decode = DECODERS[(header('content-encoding') ?? 'identity').toLowerCase()];
    if (!decode) return ['an unknown Content-Encoding'];
    let bytes: Buffer;
    try {
      bytes = decode(request.body);
    } catch {
      return ['the body does not match its Content-Encoding'];
    }
    if (bytes.length > this.bodyLimit) return [`the body is over ${this.bodyLimit} bytes`];
    if (!isUtf8(bytes)) return ['the body is not UTF-8'];
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return ['the body is not JSON'];
    }
    return media.schema ? this.schemas.problems(media.schema as SchemaObject, value, 'body') : [];
  }
}

function decodeOrUndefined(text: string, plusIsSpace = false): string | undefined {
  try {
    return decodeURIComponent(plusIsSpace ? text.replace(/\+/g, ' ') : text);
  } catch {
    return undefined;
  }
}
