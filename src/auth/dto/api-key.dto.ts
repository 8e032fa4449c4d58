import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { SCOPE_FORMAT } from '../../common/scopes';
import { EachMatching } from '../../common/validation/array.validators';
import { IsDateTime } from '../../common/validation/date-time';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { Omittable, Removable } from '../../common/validation/presence';
import { cleanTextSchema, IsCleanText } from '../../common/validation/text.validators';
import { PageCursorParam, PageLimit, DEFAULT_PAGE_SIZE } from '../../common/pagination/page-query';
import { ApiKeyEntity } from '../api-key.entity';
import { CreatedApiKey, MAX_GRACE_MS } from '../api-keys.service';

const SCOPES = {
  type: 'array',
  items: { type: 'string', pattern: SCOPE_FORMAT.source, maxLength: 70, example: 'pets:read' },
  minItems: 1,
  maxItems: 100,
  example: ['pets:read'],
} as const;
const SCOPE_RULE = 'scopes must be 1 to 100 scopes such as pets:read, pets:write or keys:manage';
const TIME = { type: 'string', format: 'date-time', maxLength: 30 } as const;
const iso = (ms: number) => new Date(ms).toISOString();

const Scopes = (): PropertyDecorator =>
  applyDecorators(ApiProperty(SCOPES), EachMatching(SCOPE_FORMAT, 100, SCOPE_RULE));

/** An API key as the API shows it: never its secret, which only its creation and rotation answer. */
@ApiSchema({ name: 'ApiKey' })
export class ApiKeyDto {
  /** @example 3 */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
  id!: number;

  /**
   * What the key is for.
   * @example "dashboard"
   */
  @ApiProperty(cleanTextSchema(1, 100))
  name!: string;

  /**
   * The first 12 characters of the secret, to recognise it.
   * @example "pet_AbCdEfGh"
   */
  @ApiProperty({ type: 'string', maxLength: 12, pattern: '^pet_[A-Za-z0-9_-]{8}$' })
  prefix!: string;

  /** What the key may do; `*`: everything (keys made before scopes, the first-run key). */
  @ApiProperty({ ...SCOPES, items: { ...SCOPES.items, pattern: `${SCOPE_FORMAT.source}|^\\*$` } })
  scopes!: string[];

  @ApiProperty(TIME)
  createdAt!: string;

  /** When the key stops working; absent: never. */
  @ApiProperty({ ...TIME, required: false })
  expiresAt?: string;

  /** When a request last used it, to the minute; absent: never. */
  @ApiProperty({ ...TIME, required: false })
  lastUsedAt?: string;

  /** Revoked keys stay listed. */
  @ApiProperty({ ...TIME, required: false })
  revokedAt?: string;

  /** After a rotation: until when the previous secret works too. */
  @ApiProperty({ ...TIME, required: false })
  previousSecretExpiresAt?: string;

  static fromEntity(key: ApiKeyEntity): ApiKeyDto {
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      scopes: key.scopes.split(' '),
      createdAt: iso(key.createdAt),
      ...(key.expiresAt === null ? {} : { expiresAt: iso(key.expiresAt) }),
      ...(key.lastUsedAt === null ? {} : { lastUsedAt: iso(key.lastUsedAt) }),
      ...(key.revokedAt === null ? {} : { revokedAt: iso(key.revokedAt) }),
      ...(key.previousExpiresAt === null ? {} : { previousSecretExpiresAt: iso(key.previousExpiresAt) }),
    };
  }
}

/** An API key with its secret: answered once, when it is made or rotated. */
@ApiSchema({ name: 'ApiKeyWithSecret' })
export class ApiKeyWithSecretDto extends ApiKeyDto {
  /** The key to send as `Authorization: Bearer <secret>`; shown only this once, never stored. */
  @ApiProperty({ type: 'string', maxLength: 47, pattern: '^pet_[A-Za-z0-9_-]{43}$' })
  secret!: string;

  static of({ key, record }: CreatedApiKey): ApiKeyWithSecretDto {
    return { ...ApiKeyDto.fromEntity(record), secret: key };
  }
}

@ApiSchema({ name: 'NewApiKey' })
export class NewApiKeyDto {
  /**
   * What the key is for (a client, a dashboard).
   * @example "dashboard"
   */
  @IsCleanText(1, 100)
  name!: string;

  /** The scopes it holds; the key that makes it must hold each of them. */
  @Scopes()
  scopes!: string[];

  /** When it stops working; absent: never, or after `API_KEY_MAX_LIFETIME_DAYS` where that is set. */
  @Omittable()
  @IsDateTime()
  expiresAt?: string;
}

/** A JSON merge patch (RFC 7396) of a key: its name, scopes or expiry (`null`: none). */
@ApiSchema({ name: 'ApiKeyPatch' })
export class ApiKeyPatchDto {
  /** The new name. */
  @Omittable()
  @IsCleanText(1, 100)
  name?: string;

  /** The scopes it holds from now on (all of them, not a change); the key that sends it must hold each. */
  @Scopes()
  @Omittable()
  scopes?: string[];

  /** The new expiry; `null`: none (or the longest allowed). */
  @Removable()
  @IsDateTime()
  expiresAt?: string | null;
}

@ApiSchema({ name: 'ApiKeyRotation' })
export class RotateApiKeyDto {
  /** How long the previous secret keeps working, in seconds: by default a day (86400), at most 7 days. */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 0, maximum: MAX_GRACE_MS / 1000 })
  @Omittable()
  @IsInt({ message: 'graceSeconds must be an integer from 0 to 604800' })
  @Min(0, { message: 'graceSeconds must be an integer from 0 to 604800' })
  @Max(MAX_GRACE_MS / 1000, { message: 'graceSeconds must be an integer from 0 to 604800' })
  graceSeconds?: number;
}

export class ListApiKeysQueryDto {
  /** Maximum number of keys to return (page size). */
  @PageLimit()
  limit: number = DEFAULT_PAGE_SIZE;

  /** Where the page starts: the `cursor` of the previous page's `Link: <...>; rel="next"`. */
  @PageCursorParam()
  cursor?: string;
}
