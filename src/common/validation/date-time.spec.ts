import { validate } from 'class-validator';
import { IsDateTime, parseDateTime } from './date-time';

describe('parseDateTime', () => {
  it.each([
    ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T01:00:00.5+01:00', '2030-01-01T00:00:00.500Z'],
    ['2030-01-01t00:00:00z', '2030-01-01T00:00:00.000Z'],
    ['2029-12-31T19:30:00-04:30', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T00:00:00-00:00', '2030-01-01T00:00:00.000Z'],
    ['2030-01-01T00:00:00.123456789Z', '2030-01-01T00:00:00.123Z'],
    ['2028-02-29T23:59:59+23:59', '2028-02-29T00:00:59.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
  ])('reads %s as %s', (text, iso) => {
    expect(new Date(parseDateTime(text)!).toISOString()).toBe(iso);
  });

  it.each([
    ['an ISO 8601 week date', '2030-W01-1'],
    ['the ISO 8601 basic format', '20300101T000000Z'],
    ['hours without minutes', '2030-01-01T00Z'],
    ['hours and minutes only', '2030-01-01T00:00Z'],
    ['a decimal comma', '2030-01-01T00:00:00,5Z'],
    ['a year', '2030'],
    ['a date', '2030-01-01'],
    ['no offset', '2030-01-01T00:00:00'],
    ['an offset without its colon', '2030-01-01T00:00:00+0100'],
    ['an offset in hours', '2030-01-01T00:00:00+01'],
    ['a space for the T', '2030-01-01 00:00:00Z'],
    ['February 30', '2030-02-30T00:00:00Z'],
    ['February 29 of a common year', '2100-02-29T00:00:00Z'],
    ['April 31', '2030-04-31T00:00:00Z'],
    ['month 13', '2030-13-01T00:00:00Z'],
    ['day 0', '2030-01-00T00:00:00Z'],
    ['hour 24', '2030-01-01T24:00:00Z'],
    ['minute 60', '2030-01-01T00:60:00Z'],
    ['a leap second', '2030-06-30T23:59:60Z'],
    ['an offset of 24 hours', '2030-01-01T00:00:00+24:00'],
    ['an empty fraction', '2030-01-01T00:00:00.Z'],
    ['ten fraction digits', '2030-01-01T00:00:00.1234567890Z'],
    ['a five-digit year', '+02030-01-01T00:00:00Z'],
    ['a date Date.parse reads', 'Tue, 01 Jan 2030 00:00:00 GMT'],
    ['a trailing newline', '2030-01-01T00:00:00Z\n'],
    ['Arabic-Indic digits', '٢٠٣٠-01-01T00:00:00Z'],
    ['empty', ''],
  ])('refuses %s (%s)', (_label, text) => {
    expect(parseDateTime(text)).toBeUndefined();
  });
});

describe('IsDateTime', () => {
  class Body {
    @IsDateTime()
    expiresAt!: unknown;
  }
  const problems = async (expiresAt: unknown) =>
    (await validate(Object.assign(new Body(), { expiresAt }))).map((error) => error.constraints);

  it('names the field and what it must be', async () => {
    expect(await problems('2030-01-01T00:00:00Z')).toEqual([]);
    for (const value of ['2030-W01-1', 1893456000000, null])
      expect(await problems(value)).toEqual([
        {
          isDateTime: 'expiresAt must be an RFC 3339 date-time with an offset, such as 2030-01-01T00:00:00Z',
        },
      ]);
  });
});
