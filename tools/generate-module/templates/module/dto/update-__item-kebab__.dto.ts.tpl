// @if update
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsCleanText } from '../../common/validation/text.validators';
// @if patchableIds
import { IsId } from '../../common/validation/id.pipe';
// @end
// @if removable
import { Omittable, Removable } from '../../common/validation/presence';
// @end
// @if !removable
import { Omittable } from '../../common/validation/presence';
// @end
import { __Item__Status } from '../__item-kebab__-status';
import { IsStatus, NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-__item-kebab__.dto';

/**
 * A JSON merge patch (RFC 7396) of __a_noun__: the properties to change, each by the rules of
 * New__Item__; `null` removes a property that may be absent and is refused for the others. Any
 * other property is refused (400).
 */
@ApiSchema({ name: '__Item__Patch' })
export class Update__Item__Dto {
  /** The new name (rules of New__Item__). */
  @Omittable()
  @IsCleanText(1, NAME_MAX_LENGTH)
  name?: string;
  // @each field
  // @if optional

  /** The new `__field__`, or `null` to remove it. */
  @Removable()
  // @if text
  @IsCleanText(1, __field_max__)
  __field__?: string | null;
  // @end
  // @if int64
  @IsId()
  __field__?: number | null;
  // @end
  // @end
  // @if !optional
  // @if !immutable

  /** The new `__field__`. */
  @Omittable()
  // @if text
  @IsCleanText(1, __field_max__)
  __field__?: string;
  // @end
  // @if int64
  @IsId()
  __field__?: number;
  // @end
  // @end
  // @end
  // @end
  // @if defaultState

  /** The new status, where the lifecycle allows the change (else 409 `invalid_transition`). */
  @ApiProperty(STATUS_SCHEMA)
  @Omittable()
  @IsStatus()
  status?: __Item__Status;
  // @end
  // @if !defaultState

  /** The new status, where the lifecycle allows the change (else 409 `invalid_transition`, `null` too). */
  @ApiProperty(STATUS_SCHEMA)
  @Removable()
  @IsStatus()
  status?: __Item__Status | null;
  // @end
  // @each reference
  // @if !immutable

  /** The id of another __ref__ (one that exists). */
  @Omittable()
  @IsId()
  __ref__Id?: number;
  // @end
  // @end
}
// @end
