import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsEnum, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { IsCleanText } from '../../common/validation/text.validators';
import { PetStatus } from '../pet-status';

export const NAME_MAX_LENGTH = 255;

/** An animal to add. `id` is assigned by the service and must not be sent. */
@ApiSchema({ name: 'NewPet' })
export class NewPetDto {
  /**
   * The animal's name: 1 to 255 characters (Unicode code points), not blank, without control
   * characters. Stored and returned exactly as sent.
   * @example "Rex"
   */
  @IsCleanText(1, NAME_MAX_LENGTH)
  name!: string;

  /**
   * Identifier of the category the animal belongs to.
   * @example 7
   */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
  // Decorators run bottom-up and stop at the first failure: the type check comes first.
  @Min(1, { message: `categoryId must be from 1 to ${MAX_EXACT_INTEGER}` })
  @Max(MAX_EXACT_INTEGER, { message: `categoryId must be from 1 to ${MAX_EXACT_INTEGER}` })
  @IsInt({ message: 'categoryId must be an integer' })
  categoryId!: number;

  /** Availability of the animal; leave it out for none (`null` is not a status). */
  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false })
  @ValidateIf((_, value) => value !== undefined)
  @IsEnum(PetStatus, { message: 'status must be one of available, pending, sold' })
  status?: PetStatus;
}
