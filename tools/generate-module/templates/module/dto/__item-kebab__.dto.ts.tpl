import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { cleanTextSchema } from '../../common/validation/text.validators';
import { __Item__Entity } from '../__item-kebab__.entity';
import { __Item__Status } from '../__item-kebab__-status';
import { DESCRIPTION_MAX_LENGTH, NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-__item-kebab__.dto';

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

  /** Where the __noun__ stands. */
  @ApiProperty(STATUS_SCHEMA)
  status!: __Item__Status;
  // @each reference

  /**
   * The __ref__ it belongs to.
   * @example 1
   */
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER })
  __ref__Id!: number;
  // @end

  /** The one place an entity becomes a response body. */
  static fromEntity(entity: __Item__Entity): __Item__Dto {
    return {
      id: entity.id,
      name: entity.name,
      ...(entity.description === null ? {} : { description: entity.description }),
      status: entity.status,
      // @each reference
      __ref__Id: entity.__ref__Id,
      // @end
    };
  }
}
