import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { cleanTextSchema } from '../../common/validation/text.validators';
import { PetEntity } from '../pet.entity';
import { PetStatus } from '../pet-status';
import { NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-pet.dto';

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER } as const;

/** What the service answers: a NewPet plus the identifier the service assigned. */
@ApiSchema({ name: 'Pet' })
export class PetDto {
  /**
   * Unique identifier assigned by the service on creation.
   * @example 1
   */
  @ApiProperty(INT64)
  id!: number;

  /**
   * The animal's name, exactly as it was sent.
   * @example "Rex"
   */
  @ApiProperty(cleanTextSchema(1, NAME_MAX_LENGTH))
  name!: string;

  /**
   * Identifier of the category the animal belongs to.
   * @example 7
   */
  @ApiProperty(INT64)
  categoryId!: number;

  /** Where the animal stands; absent when it has no status (never `null`). */
  @ApiProperty({ ...STATUS_SCHEMA, required: false })
  status?: PetStatus;

  /** The one place an entity becomes a response body. */
  static fromEntity(entity: PetEntity): PetDto {
    return {
      id: entity.id,
      name: entity.name,
      categoryId: entity.categoryId,
      ...(entity.status === null ? {} : { status: entity.status }),
    };
  }
}
