import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';

/**
 * RFC 3339 `date-time` with its offset (`T` and `Z` in either case, as its ABNF allows), and no
 * second 60: what JavaScript's Date cannot hold is refused, never guessed.
 */
const DATE_TIME =
  /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])([01]\d|2[0-3]):([0-5]\d))$/;

/** The epoch milliseconds of an RFC 3339 date-time with an offset; undefined for anything else. */
export function parseDateTime(text: string): number | undefined {
  const parts = DATE_TIME.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hours, minutes, seconds] = parts.slice(1, 7).map(Number);
  const offset =
    parts[8] === undefined ? 0 : Number(`${parts[8]}1`) * (Number(parts[9]) * 60 + Number(parts[10]));
  const date = new Date(0);
  // Not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return undefined;
  return date.setUTCHours(
    hours,
    minutes - offset,
    seconds,
    Number((parts[7] ?? '').padEnd(3, '0').slice(0, 3)),
  );
}

/** A request's date-time (body or query): 400 naming the field unless `parseDateTime` reads it. */
export function IsDateTime(): PropertyDecorator {
  return applyDecorators(
    // In the document, `format` judges the day of the month.
    ApiProperty({
      type: 'string',
      format: 'date-time',
      pattern: DATE_TIME.source,
      maxLength: 35,
      example: '2030-01-01T00:00:00Z',
    }),
    ValidateBy(
      {
        name: 'isDateTime',
        validator: { validate: (value) => typeof value === 'string' && parseDateTime(value) !== undefined },
      },
      { message: '$property must be an RFC 3339 date-time with an offset, such as 2030-01-01T00:00:00Z' },
    ),
  );
}
