import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { IsCleanText } from '../../common/validation/text.validators';
import { IsId } from '../../common/validation/id.pipe';
import { Omittable, Removable } from '../../common/validation/presence';
import { PetStatus } from '../pet-status';
import { IsStatus, NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-pet.dto';

/**
 * A JSON merge patch (RFC 7396) of an animal: the properties to change, each by the rules of
 * NewPet; `null` removes a property that may be absent and is refused for the others. Any
 * other property is refused (400).
 */
@ApiSchema({ name: 'PetPatch' })
export class UpdatePetDto {
  /** The new name (rules of NewPet). */
  @Omittable()
  @IsCleanText(1, NAME_MAX_LENGTH)
  name?: string;

  /** The new `categoryId`. */
  @Omittable()
  @IsId()
  categoryId?: number;

  /** The new status, where the lifecycle allows the change (else 409 `invalid_transition`, `null` too). */
  @ApiProperty(STATUS_SCHEMA)
  @Removable()
  @IsStatus()
  status?: PetStatus | null;
}
