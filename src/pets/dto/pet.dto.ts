import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { cleanTextSchema } from '../../common/validation/text.validators';
import { PetEntity } from '../pet.entity';
import { NAME_MAX_LENGTH } from './new-pet.dto';
import { PetStatus } from '../pet-status';

/** An animal: a NewPet plus the identifier the service assigned. */
@ApiSchema({ name: 'Pet' })
export class PetDto {
  /**
   * Unique identifier assigned by the service on creation.
   * @example 1
   */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
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
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
  categoryId!: number;

  /** Absent when the animal has no status (never `null`). */
  @ApiProperty({ enum: PetStatus, enumName: 'PetStatus', required: false })
  status?: PetStatus;

  /** The one place an entity becomes a response body. */
  static fromEntity(entity: PetEntity): PetDto {
    const pet: PetDto = { id: entity.id, name: entity.name, categoryId: entity.categoryId };
    if (entity.status !== null) pet.status = entity.status;
    return pet;
  }
}
