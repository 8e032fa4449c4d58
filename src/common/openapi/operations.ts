import { applyDecorators, Delete, Get, HttpCode, Param, Patch, Post, Type } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
} from '@nestjs/swagger';
import { AnyErrorCode } from '../errors/error-codes';
import type { Lifecycle } from '../lifecycle';
import { API_PREFIX } from '../resource-location';
import { ApiIdParam, IdPipe } from '../validation/id.pipe';
import { ApiErrors } from './api-errors.decorator';
import {
  etagHeaderDocs,
  IDEMPOTENCY_KEY_HEADER_DOCS,
  ifMatchHeaderDocs,
  locationHeaderDocs,
  MERGE_PATCH,
  ResponseHeaders,
} from './headers';

/** E.g. `pets`, `petId`, `animal`, `animals`; the plural, where it is not the noun and `s`, given. */
export interface Resource {
  collection: string;
  param: string;
  noun: string;
  nouns?: string;
}

export function IdParam(resource: Resource): ParameterDecorator {
  return Param(resource.param, new IdPipe(resource.param, resource.noun));
}

/** `path`: a list below another resource (`:endpointId/deliveries`), its 404 declared too. */
export function ListOperation(
  type: Type,
  resource: Resource,
  filters: readonly string[] = [],
  path?: string,
): MethodDecorator {
  const kept = ['limit', ...filters].map((name) => `\`${name}\``).join(' and ');
  const nouns = resource.nouns ?? `${resource.noun}s`;
  return applyDecorators(
    Get(path),
    ApiOkResponse({
      description: `Success: the page of ${nouns}.`,
      type: [type],
      headers: {
        Link: {
          description:
            `RFC 8288: \`<...>; rel="next"\` when more ${nouns} match, to the next page (same ${kept}, ` +
            'and an opaque `cursor`). Absent on the last page.',
          required: false,
          schema: {
            type: 'string',
            maxLength: 512,
            pattern: `^</${API_PREFIX}/${resource.collection}\\?[^>]*cursor=[^>]+>; rel="next"$`,
          },
        },
      },
    }),
    ApiErrors(path ? [400, 401, 404, 429, 500, 503] : [400, 401, 429, 500, 503]),
    onlyDeclaredSuccess(200),
  );
}

export interface ChangeOptions {
  /** The module's own codes it may answer (a missing reference: 422). */
  errors?: readonly AnyErrorCode[];
}

export function CreateOperation(
  type: Type,
  resource: Resource,
  options: ChangeOptions & { versioned?: boolean } = {},
): MethodDecorator {
  return applyDecorators(
    Post(),
    ApiCreatedResponse({
      type,
      description: `${resource.noun.charAt(0).toUpperCase()}${resource.noun.slice(1)} added.`,
      headers: {
        ...locationHeaderDocs(resource.collection, resource.noun),
        ...(options.versioned ? etagHeaderDocs(false) : {}),
      },
    }),
    ApiHeader(IDEMPOTENCY_KEY_HEADER_DOCS),
    ApiErrors([400, 401, 409, 413, 415, 422, 429, 500, 503, ...(options.errors ?? [])]),
    onlyDeclaredSuccess(201),
  );
}

export function GetOperation(
  type: Type,
  resource: Resource,
  options: { versioned?: boolean; headers?: ResponseHeaders } = {},
): MethodDecorator {
  return applyDecorators(
    Get(`:${resource.param}`),
    ApiIdParam(resource.param, resource.noun),
    ApiOkResponse({
      type,
      description: `The ${resource.noun} exists.`,
      headers: { ...(options.versioned ? etagHeaderDocs() : {}), ...options.headers },
    }),
    ApiErrors([400, 401, 404, 429, 500, 503], { headers: options.headers }),
    onlyDeclaredSuccess(200),
  );
}

export function UpdateOperation(
  type: Type,
  patch: Type,
  resource: Resource,
  options: ChangeOptions & { lifecycle?: Lifecycle<string> } = {},
): MethodDecorator {
  const { lifecycle } = options;
  const transitions = lifecycle?.restricts
    ? [
        {
          code: 'invalid_transition' as const,
          description:
            `A status change this table does not allow (\`invalid_transition\`); nothing changes:\n\n` +
            `${lifecycle.table()}\n`,
        },
      ]
    : [];
  const errors = [...transitions, ...(options.errors ?? [])];
  return applyDecorators(
    Patch(`:${resource.param}`),
    ApiIdParam(resource.param, resource.noun),
    ApiConsumes(MERGE_PATCH),
    ApiBody({ type: patch }),
    ApiHeader(ifMatchHeaderDocs(true)),
    ApiOkResponse({ type, description: `The ${resource.noun} as changed.`, headers: etagHeaderDocs() }),
    ApiErrors([400, 401, 404, 'version_limit_reached', 412, 413, 415, 428, 429, 500, 503, ...errors]),
    onlyDeclaredSuccess(200),
  );
}

export function DeleteOperation(resource: Resource): MethodDecorator {
  return applyDecorators(
    Delete(`:${resource.param}`),
    HttpCode(204),
    ApiIdParam(resource.param, resource.noun),
    ApiHeader(ifMatchHeaderDocs(false)),
    ApiNoContentResponse({ description: `The ${resource.noun} is removed.` }),
    ApiErrors([400, 401, 404, 'still_referenced', 412, 429, 500, 503]),
    onlyDeclaredSuccess(204),
  );
}

/** Drops the success response the plugin infers from the return type (it cannot see ours). */
function onlyDeclaredSuccess(status: number): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    // @nestjs/swagger's DECORATORS.API_RESPONSE, not exported.
    const handler = descriptor.value as object;
    const responses = (Reflect.getMetadata('swagger/apiResponse', handler) ?? {}) as Record<string, unknown>;
    for (const code of Object.keys(responses))
      if (Number(code) >= 200 && Number(code) < 300 && Number(code) !== status) delete responses[code];
    return descriptor;
  };
}
