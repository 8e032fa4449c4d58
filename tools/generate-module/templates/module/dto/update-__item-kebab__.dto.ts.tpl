// @if update
import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { IsCleanText } from '../../common/validation/text.validators';
// @if references
import { IsId } from '../../common/validation/id.pipe';
// @end
import { __ITEM___STATUSES, __Item__Status } from '../__item-kebab__-status';
import { DESCRIPTION_MAX_LENGTH, NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-__item-kebab__.dto';

const present = (_: object, value: unknown) => value !== undefined;

/**
 * A JSON merge patch (RFC 7396) of __a_noun__: the properties to change, each by the rules of
 * New__Item__; `null` removes a property that may be absent (`description`) and is refused for
 * the others. Any other property is refused (400).
 */
@ApiSchema({ name: '__Item__Patch' })
export class Update__Item__Dto {
  /** The new name (rules of New__Item__). */
  @ApiProperty({ required: false })
  @ValidateIf(present)
  @IsCleanText(1, NAME_MAX_LENGTH)
  name?: string;

  /** The new description, or `null` to remove it. */
  @ApiProperty({ required: false, nullable: true })
  @ValidateIf((_, value) => value !== undefined && value !== null)
  @IsCleanText(1, DESCRIPTION_MAX_LENGTH)
  description?: string | null;

  /** The new status. */
  @ApiProperty({ ...STATUS_SCHEMA, required: false })
  @ValidateIf(present)
  @IsIn(__ITEM___STATUSES)
  status?: __Item__Status;
  // @each reference

  /** The id of another __ref__ (one that exists). */
  @ApiProperty({ required: false })
  @ValidateIf(present)
  @IsId()
  __ref__Id?: number;
  // @end
}
// @end
