import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { decimalToNumber } from '../validation/int64';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

const LIMIT_RULE = `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`;
const CURSOR_RULE = 'cursor must be the value from a next link';
const CURSOR_PATTERN = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const CURSOR_MAX_LENGTH = 200;

/** On a property initialised to `DEFAULT_PAGE_SIZE`. */
export function PageLimit(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: MAX_PAGE_SIZE,
      default: DEFAULT_PAGE_SIZE,
      required: false,
    }),
    Transform(decimalToNumber),
    IsInt({ message: LIMIT_RULE }),
    Min(1, { message: LIMIT_RULE }),
    Max(MAX_PAGE_SIZE, { message: LIMIT_RULE }),
  );
}

/** Its checksum and filter are checked when it is decoded. */
export function PageCursorParam(): PropertyDecorator {
  return applyDecorators(
    ApiProperty({ required: false, maxLength: CURSOR_MAX_LENGTH, pattern: CURSOR_PATTERN.source }),
    ValidateIf((_, value) => value !== undefined),
    IsString({ message: CURSOR_RULE }),
    MaxLength(CURSOR_MAX_LENGTH, { message: CURSOR_RULE }),
    Matches(CURSOR_PATTERN, { message: CURSOR_RULE }),
  );
}
