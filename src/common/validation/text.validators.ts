import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

const ALLOWED = '\\u0000-\\u001f\\u007f\\ud800-\\udfff';
/** ECMA-262 in Unicode mode, where a lone surrogate is one code point of U+D800–U+DFFF. */
export const CLEAN_TEXT_PATTERN = `^[^${ALLOWED}]*[^\\s${ALLOWED}][^${ALLOWED}]*$`;

export const cleanTextSchema = (min: number, max: number) => ({
  minLength: min,
  maxLength: max,
  pattern: CLEAN_TEXT_PATTERN,
});

/** Well-formed, not blank, no control characters, `min` to `max` code points (as JSON Schema counts). */
export function isCleanText(value: unknown, min: number, max: number): value is string {
  if (typeof value !== 'string') return false;
  if (!value.isWellFormed() || CONTROL_CHARACTER.test(value)) return false;
  if (value.trim() === '') return false;
  let length = 0;
  for (const _ of value) if (++length > max) return false;
  return length >= min;
}

export function IsCleanText(min: number, max: number): PropertyDecorator {
  return applyDecorators(
    ApiProperty(cleanTextSchema(min, max)),
    ValidateBy(
      {
        name: 'isCleanText',
        validator: {
          validate: (value: unknown) => isCleanText(value, min, max),
        },
      },
      {
        message: `$property must be a string of ${min} to ${max} characters, not blank, with no control characters`,
      },
    ),
  );
}
