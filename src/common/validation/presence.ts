import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';

/** A body property that may be left out; sent, `null` included, it must pass its other rules. */
export function Omittable(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ required: false }),
    ValidateIf((_, value) => value !== undefined),
  );
}

/** A merge patch's property that may be left out, or `null` to remove it (RFC 7396). */
export function Removable(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ required: false, nullable: true }),
    ValidateIf((_, value) => value !== undefined && value !== null),
  );
}
