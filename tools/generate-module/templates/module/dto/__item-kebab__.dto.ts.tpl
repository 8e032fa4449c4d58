import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { cleanTextSchema } from '../../common/validation/text.validators';
import { __Item__Entity } from '../__item-kebab__.entity';
import { DESCRIPTION_MAX_LENGTH, NAME_MAX_LENGTH } from './new-__item-kebab__.dto';

/** What the service answers: a New__Item__ plus the identifier the service assigned. */
@ApiSchema({ name: '__Item__' })
export class __Item__Dto {
  /**
   * Unique identifier assigned by the service on creation.
   * @example 1
   */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
  id!: number;

  /**
   * The __noun__'s name, exactly as it was sent.
   * @example "First"
   */
  @ApiProperty(cleanTextSchema(1, NAME_MAX_LENGTH))
  name!: string;

  /** Absent when the __noun__ has none (never `null`). */
  @ApiProperty({ required: false, ...cleanTextSchema(1, DESCRIPTION_MAX_LENGTH) })
  description?: string;

  /** The one place an entity becomes a response body. */
  static fromEntity(entity: __Item__Entity): __Item__Dto {
    const body: __Item__Dto = { id: entity.id, name: entity.name };
    if (entity.description !== null) body.description = entity.description;
    return body;
  }
}
