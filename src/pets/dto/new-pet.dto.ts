import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { IsCleanText } from '../../common/validation/text.validators';
import { IsId } from '../../common/validation/id.pipe';
import { Omittable } from '../../common/validation/presence';
import { PET_STATUSES, PetStatus } from '../pet-status';

export const NAME_MAX_LENGTH = 255;

/** The OpenAPI schema of the status, shared by every DTO that has one. */
export const STATUS_SCHEMA = { enum: [...PET_STATUSES], enumName: 'PetStatus' };
/** The status rule of every DTO that takes one. */
export const IsStatus = () =>
  IsIn(PET_STATUSES, { message: `status must be one of ${PET_STATUSES.join(', ')}` });

/**
 * What a client sends to add an animal. Every property needs a class-validator rule: a
 * property without one is refused as unknown (400), as is any property not declared here
 * (`id` included).
 */
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
   * Identifier of the category the animal belongs to: a whole number from 1 to 2^53 - 1 (int64).
   * @example 7
   */
  @IsId()
  categoryId!: number;

  /** Where the animal stands; leave it out for none (`null` is not a status). */
  @ApiProperty(STATUS_SCHEMA)
  @Omittable()
  @IsStatus()
  status?: PetStatus;
}
