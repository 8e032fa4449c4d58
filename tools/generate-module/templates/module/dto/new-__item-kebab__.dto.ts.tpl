// @if createStatus
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
// @end
// @if !createStatus
import { ApiSchema } from '@nestjs/swagger';
// @end
import { IsIn } from 'class-validator';
import { IsCleanText } from '../../common/validation/text.validators';
// @if references
import { IsId } from '../../common/validation/id.pipe';
// @end
// @if !references
// @if int64Fields
import { IsId } from '../../common/validation/id.pipe';
// @end
// @end
// @if omittable
import { Omittable } from '../../common/validation/presence';
// @end
// @if createStatus
// @if defaultState
import { DEFAULT___ITEM___STATUS, __ITEM___STATUSES, __Item__Status } from '../__item-kebab__-status';
// @end
// @if !defaultState
import { __ITEM___STATUSES, __Item__Status } from '../__item-kebab__-status';
// @end
// @end
// @if !createStatus
import { __ITEM___STATUSES } from '../__item-kebab__-status';
// @end

export const NAME_MAX_LENGTH = 255;

/** The OpenAPI schema of the status, shared by every DTO that has one. */
export const STATUS_SCHEMA = { enum: [...__ITEM___STATUSES], enumName: '__Item__Status' };
/** The status rule of every DTO that takes one. */
export const IsStatus = () =>
  IsIn(__ITEM___STATUSES, { message: `status must be one of ${__ITEM___STATUSES.join(', ')}` });

/**
 * What a client sends to add __a_noun__. Every property needs a class-validator rule: a
 * property without one is refused as unknown (400), as is any property not declared here
 * (`id` included).
 */
@ApiSchema({ name: 'New__Item__' })
export class New__Item__Dto {
  /**
   * The __noun__'s name: 1 to 255 characters (Unicode code points), not blank, without control
   * characters. Stored and returned exactly as sent.
   * @example "First"
   */
  @IsCleanText(1, NAME_MAX_LENGTH)
  name!: string;
  // @each field
  // @if text
  // @if optional

  /** 1 to __field_max__ characters, not blank, without control characters; leave it out for none (`null` is refused). */
  @Omittable()
  @IsCleanText(1, __field_max__)
  __field__?: string;
  // @end
  // @if !optional

  /**
   * 1 to __field_max__ characters, not blank, without control characters.
   // @if immutable
   * A patch cannot change it.
   // @end
   * @example "More"
   */
  @IsCleanText(1, __field_max__)
  __field__!: string;
  // @end
  // @end
  // @if int64
  // @if optional

  /** A whole number from 1 to 2^53 - 1 (int64); leave it out for none (`null` is refused). */
  @Omittable()
  @IsId()
  __field__?: number;
  // @end
  // @if !optional

  /**
   * A whole number from 1 to 2^53 - 1 (int64).
   // @if immutable
   * A patch cannot change it.
   // @end
   * @example 7
   */
  @IsId()
  __field__!: number;
  // @end
  // @end
  // @end
  // @if createStatus
  // @if defaultState

  /** Where the __noun__ stands; `__default_state__` when left out. */
  @ApiProperty({ ...STATUS_SCHEMA, default: DEFAULT___ITEM___STATUS })
  @Omittable()
  @IsStatus()
  status?: __Item__Status;
  // @end
  // @if !defaultState

  /** Where the __noun__ stands; leave it out for none (`null` is not a status). */
  @ApiProperty(STATUS_SCHEMA)
  @Omittable()
  @IsStatus()
  status?: __Item__Status;
  // @end
  // @end
  // @each reference

  /**
   * The id of the __ref__ it belongs to: one that exists (422 `__ref_code__` when none has it).
   // @if immutable
   * A patch cannot change it.
   // @end
   * @example 1
   */
  @IsId()
  __ref__Id!: number;
  // @end
}
