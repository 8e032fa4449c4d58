import { Body, Controller, Delete, HttpCode, Inject, Patch, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { ApiException, invalidField } from '../common/errors/api-exception';
import { insufficientScope } from '../common/errors/bearer-challenge';
import type { AnyErrorCode } from '../common/errors/error-codes';
import { ApiErrors } from '../common/openapi/api-errors.decorator';
import { ApiResource } from '../common/openapi/api-resource.decorator';
import { locationHeaderDocs, MERGE_PATCH } from '../common/openapi/headers';
import { GetOperation, IdParam, ListOperation, Resource } from '../common/openapi/operations';
import { setNextLink } from '../common/pagination/next-link';
import { resourceLocation } from '../common/resource-location';
import { EVERY_SCOPE, RequiredScope, unknownScope, Vocabulary, VOCABULARY } from '../common/scopes';
import { parseDateTime } from '../common/validation/date-time';
import { ApiIdParam } from '../common/validation/id.pipe';
import { ApiKeyError, ApiKeysService, DEFAULT_GRACE_MS, holds, KeyWrite } from './api-keys.service';
import { AUTH_ERRORS } from './auth.errors';
import { callerOf } from './caller';
import {
  ApiKeyDto,
  ApiKeyPatchDto,
  ApiKeyWithSecretDto,
  ListApiKeysQueryDto,
  NewApiKeyDto,
  RotateApiKeyDto,
} from './dto/api-key.dto';

const KEYS: Resource = { collection: 'api-keys', param: 'keyId', noun: 'API key' };
const SECRET_ONCE =
  'The secret is in this answer only: the service keeps its SHA-256 digest, never the secret.';

/** The API's refusals of the service's: 404 for no key `id`, 409 for a revoked one, else 400 naming the field. */
async function answered<T>(work: () => Promise<T>, id?: number): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ApiKeyError)) throw error;
    if (error.kind === 'not_found') throw new ApiException('not_found', `No API key has id ${id}.`);
    if (error.kind === 'revoked') throw new ApiException(AUTH_ERRORS.api_key_revoked);
    if (error.kind === 'last_manager') throw new ApiException(AUTH_ERRORS.last_key_manager);
    if (error.kind === 'changed') throw new ApiException(AUTH_ERRORS.api_key_changed);
    throw invalidField(error.field ?? 'body', error.message);
  }
}

/** Only scopes some operation asks for: a typo is 400, never a key that silently can do less. */
function knownScopes(vocabulary: Vocabulary, scopes: readonly string[] | undefined): void {
  const unknown = unknownScope(vocabulary, scopes);
  if (unknown !== undefined) throw invalidField('scopes', `${unknown} is not a scope of this service`);
}

/** A key cannot give another key a scope it lacks itself, nor change, rotate or revoke one that has such a scope. */
function mayGrant(req: Request, scopes: Iterable<string> | undefined, what = 'grant the scope'): void {
  const held = callerOf(req)!.scopes;
  const lacking = [...(scopes ?? [])].find((scope) => !holds(held, scope));
  if (lacking !== undefined)
    throw insufficientScope(lacking, `The API key cannot ${what} ${lacking}, which it lacks.`);
}

/** No key gets another's powers by rotating, changing or revoking it: the caller holds every scope of the key. */
const managedBy = (req: Request, vocabulary: Vocabulary): KeyWrite => ({
  request: req,
  check: (key) =>
    mayGrant(
      req,
      key.scopes === EVERY_SCOPE ? vocabulary.scopes : key.scopes.split(' '),
      'manage a key with the scope',
    ),
});

/** The answers of a change with a body, its 409s among them. */
const ChangeErrors = (...conflicts: AnyErrorCode[]) =>
  ApiErrors([400, 401, 404, ...conflicts, 413, 415, 429, 500, 503]);

const time = (value: string | null | undefined) =>
  value === undefined || value === null ? value : parseDateTime(value);

@ApiResource(
  KEYS.collection,
  'The API keys and what each may do (its scopes), for keys with `keys:manage`. A secret is shown once, ' +
    "when its key is made or rotated; a rotated key's previous secret keeps working for a grace period. " +
    'Changes reach every instance within a second.',
)
@RequiredScope('keys:manage')
@Controller(KEYS.collection)
export class ApiKeysController {
  constructor(
    private readonly keys: ApiKeysService,
    @Inject(VOCABULARY) private readonly vocabulary: Vocabulary,
  ) {}

  /**
   * List API keys
   * @remarks Every key, revoked ones included, in ascending id order; never a secret.
   */
  @ListOperation(ApiKeyDto, KEYS)
  async listApiKeys(
    @Query() query: ListApiKeysQueryDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ApiKeyDto[]> {
    const page = await this.keys.page(query);
    setNextLink(res, KEYS.collection, { limit: query.limit }, page.nextCursor);
    return page.items.map((key) => ApiKeyDto.fromEntity(key));
  }

  /**
   * Make an API key
   * @remarks A key with these scopes, each one some operation asks for (400) and the key sending
   * this holds (403). The answer holds its secret, once.
   */
  @Post()
  @ApiCreatedResponse({
    type: ApiKeyWithSecretDto,
    description: `API key made. ${SECRET_ONCE}`,
    headers: locationHeaderDocs(KEYS.collection, KEYS.noun),
  })
  @ApiErrors([400, 401, 413, 415, 429, 500, 503])
  async createApiKey(
    @Body() body: NewApiKeyDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ApiKeyWithSecretDto> {
    knownScopes(this.vocabulary, body.scopes);
    mayGrant(req, body.scopes);
    const created = await answered(() =>
      this.keys.create(body.name, { scopes: body.scopes, expiresAt: time(body.expiresAt) }, { request: req }),
    );
    res.setHeader('Location', resourceLocation(KEYS.collection, created.record.id));
    return ApiKeyWithSecretDto.of(created);
  }

  /**
   * Get an API key
   * @remarks The key with this id, never its secret.
   */
  @GetOperation(ApiKeyDto, KEYS)
  async getApiKey(@IdParam(KEYS) id: number): Promise<ApiKeyDto> {
    return ApiKeyDto.fromEntity(await answered(() => this.keys.get(id), id));
  }

  /**
   * Change an API key
   * @remarks A JSON merge patch (RFC 7396) of its name, scopes or expiry; a revoked key is 409. The
   * key sending this must hold every scope of the key and every new one (403). The last active key
   * that can manage keys cannot lose `keys:manage` or gain an earlier expiry (409
   * `last_key_manager`); a change that another made meanwhile is 409 `api_key_changed`.
   */
  @Patch(`:${KEYS.param}`)
  @ApiIdParam(KEYS.param, KEYS.noun)
  @ApiConsumes(MERGE_PATCH)
  @ApiBody({ type: ApiKeyPatchDto })
  @ApiOkResponse({ type: ApiKeyDto, description: 'The API key as changed.' })
  @ChangeErrors(AUTH_ERRORS.api_key_revoked, AUTH_ERRORS.last_key_manager, AUTH_ERRORS.api_key_changed)
  async updateApiKey(
    @IdParam(KEYS) id: number,
    @Body() patch: ApiKeyPatchDto,
    @Req() req: Request,
  ): Promise<ApiKeyDto> {
    knownScopes(this.vocabulary, patch.scopes);
    mayGrant(req, patch.scopes);
    const change = { ...patch, expiresAt: time(patch.expiresAt) };
    return ApiKeyDto.fromEntity(
      await answered(() => this.keys.update(String(id), change, managedBy(req, this.vocabulary)), id),
    );
  }

  /**
   * Rotate an API key's secret
   * @remarks A new secret, in the answer once. The previous one keeps working for `graceSeconds`
   * (default a day, at most 7 days), so that clients can move to the new one without downtime. A
   * key has at most two valid secrets: rotating again during a grace period ends the older secret
   * at once. The key sending this must hold every scope of the key (403).
   */
  @Post(`:${KEYS.param}/rotate`)
  @HttpCode(200)
  @ApiIdParam(KEYS.param, KEYS.noun)
  @ApiOkResponse({ type: ApiKeyWithSecretDto, description: `The new secret. ${SECRET_ONCE}` })
  @ChangeErrors(AUTH_ERRORS.api_key_revoked, AUTH_ERRORS.api_key_changed)
  async rotateApiKey(
    @IdParam(KEYS) id: number,
    @Body() body: RotateApiKeyDto,
    @Req() req: Request,
  ): Promise<ApiKeyWithSecretDto> {
    const graceMs = body.graceSeconds === undefined ? DEFAULT_GRACE_MS : body.graceSeconds * 1000;
    return ApiKeyWithSecretDto.of(
      await answered(() => this.keys.rotate(String(id), graceMs, managedBy(req, this.vocabulary)), id),
    );
  }

  /**
   * Revoke an API key
   * @remarks Both its secrets stop working on every instance within a second. The key stays
   * listed, with `revokedAt`; revoking it again changes nothing. The key sending this must hold
   * every scope of the key (403), and the last active key that can manage keys stays (409).
   */
  @Delete(`:${KEYS.param}`)
  @HttpCode(204)
  @ApiIdParam(KEYS.param, KEYS.noun)
  @ApiNoContentResponse({ description: 'The API key is revoked.' })
  @ApiErrors([400, 401, 404, AUTH_ERRORS.last_key_manager, AUTH_ERRORS.api_key_changed, 429, 500, 503])
  async revokeApiKey(@IdParam(KEYS) id: number, @Req() req: Request): Promise<void> {
    await answered(() => this.keys.revoke(String(id), managedBy(req, this.vocabulary)), id);
  }
}
