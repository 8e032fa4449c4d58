import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn, ValidateIf } from 'class-validator';
import { IsCleanText } from '../../common/validation/text.validators';
// @if references
import { IsId } from '../../common/validation/id.pipe';
// @end
import { DEFAULT___ITEM___STATUS, __ITEM___STATUSES, __Item__Status } from '../__item-kebab__-status';

export const NAME_MAX_LENGTH = 255;
export const DESCRIPTION_MAX_LENGTH = 1000;

/** The OpenAPI schema of the status, shared by every DTO that has one. */
export const STATUS_SCHEMA = { enum: [...__ITEM___STATUSES], enumName: '__Item__Status' };

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

  /** What the __noun__ is about: up to 1000 characters; leave it out for none (`null` is refused). */
  @ApiProperty({ required: false })
  @ValidateIf((_, value) => value !== undefined)
  @IsCleanText(1, DESCRIPTION_MAX_LENGTH)
  description?: string;

  /** Where the __noun__ stands; `active` when left out. */
  @ApiProperty({ ...STATUS_SCHEMA, required: false, default: DEFAULT___ITEM___STATUS })
  @ValidateIf((_, value) => value !== undefined)
  @IsIn(__ITEM___STATUSES)
  status?: __Item__Status;
  // @each reference

  /**
   * The id of the __ref__ it belongs to: one that exists (422 `__ref_code__` when none has it).
   * @example 1
   */
  @IsId()
  __ref__Id!: number;
  // @end
}
