import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { MAX_EXACT_INTEGER } from '../../common/validation/int64';
import { cleanTextSchema } from '../../common/validation/text.validators';
import { __Item__Entity } from '../__item-kebab__.entity';
import { __Item__Status } from '../__item-kebab__-status';
import { NAME_MAX_LENGTH, STATUS_SCHEMA } from './new-__item-kebab__.dto';

const INT64 = { type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER } as const;

/** What the service answers: a New__Item__ plus the identifier the service assigned. */
@ApiSchema({ name: '__Item__' })
export class __Item__Dto {
  /**
   * Unique identifier assigned by the service on creation.
   * @example 1
   */
  @ApiProperty(INT64)
  id!: number;

  /**
   * The __noun__'s name, exactly as it was sent.
   * @example "First"
   */
  @ApiProperty(cleanTextSchema(1, NAME_MAX_LENGTH))
  name!: string;
  // @each field
  // @if optional

  /** Absent when the __noun__ has none (never `null`). */
  // @end
  // @if !optional

  /** As it was sent. */
  // @end
  // @if text
  // @if optional
  @ApiProperty({ required: false, ...cleanTextSchema(1, __field_max__) })
  __field__?: string;
  // @end
  // @if !optional
  @ApiProperty(cleanTextSchema(1, __field_max__))
  __field__!: string;
  // @end
  // @end
  // @if int64
  // @if optional
  @ApiProperty({ required: false, ...INT64 })
  __field__?: number;
  // @end
  // @if !optional
  @ApiProperty(INT64)
  __field__!: number;
  // @end
  // @end
  // @end
  // @if defaultState

  /** Where the __noun__ stands. */
  @ApiProperty(STATUS_SCHEMA)
  status!: __Item__Status;
  // @end
  // @if !defaultState

  /** Where the __noun__ stands; absent when it has no status (never `null`). */
  @ApiProperty({ ...STATUS_SCHEMA, required: false })
  status?: __Item__Status;
  // @end
  // @each reference

  /**
   * The __ref__ it belongs to.
   * @example 1
   */
  @ApiProperty(INT64)
  __ref__Id!: number;
  // @end

  /** The one place an entity becomes a response body. */
  static fromEntity(entity: __Item__Entity): __Item__Dto {
    return {
      id: entity.id,
      name: entity.name,
      // @each field
      // @if optional
      ...(entity.__field__ === null ? {} : { __field__: entity.__field__ }),
      // @end
      // @if !optional
      __field__: entity.__field__,
      // @end
      // @end
      // @if defaultState
      status: entity.status,
      // @end
      // @if !defaultState
      ...(entity.status === null ? {} : { status: entity.status }),
      // @end
      // @each reference
      __ref__Id: entity.__ref__Id,
      // @end
    };
  }
}
