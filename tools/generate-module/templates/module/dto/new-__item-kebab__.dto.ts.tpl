import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsCleanText } from '../../common/validation/text.validators';

export const NAME_MAX_LENGTH = 255;
export const DESCRIPTION_MAX_LENGTH = 1000;

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
}
