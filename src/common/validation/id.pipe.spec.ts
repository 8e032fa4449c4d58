import { ApiException } from '../errors/api-exception';
import { IdPipe } from './id.pipe';

/** What a pipe call threw, as the client will see it. */
function refusal(transform: () => unknown): {
  code: string;
  status: number;
  message: string;
  details: unknown;
} {
  let thrown: unknown;
  try {
    transform();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ApiException);
  const error = thrown as ApiException;
  return { code: error.code, status: error.getStatus(), message: error.message, details: error.details };
}

describe('IdPipe', () => {
  const pipe = new IdPipe('petId', 'animal');

  it.each([
    ['1', 1],
    ['42', 42],
    ['007', 7],
    ['999999999999999', 999999999999999],
    ['1000000000000000', 1000000000000000],
    ['9007199254740991', 9007199254740991],
    ['000000000000000000000000042', 42],
  ])('turns %s into the id %d', (raw, id) => {
    expect(pipe.transform(raw)).toBe(id);
  });

  it('reads an id after 5,000 leading zeros', () => {
    expect(pipe.transform(`${'0'.repeat(5000)}9007199254740991`)).toBe(9007199254740991);
  });

  it.each([
    ['0'],
    ['-0'],
    ['-5'],
    ['9007199254740992'],
    ['9223372036854775807'],
    ['-9223372036854775808'],
    ['000000000000000000000000000'],
    ['-0009223372036854775808'],
  ])('answers %s, an int64 no animal can have, with 404 not_found', (raw) => {
    expect(refusal(() => pipe.transform(raw))).toEqual({
      code: 'not_found',
      status: 404,
      message: 'No animal has this id.',
      details: undefined,
    });
  });

  it.each([
    ['9223372036854775808'],
    ['-9223372036854775809'],
    ['99999999999999999999'],
    ['123456789012345678901'],
    ['00000009223372036854775808'],
    ['--1'],
    ['abc'],
    ['1.5'],
    [''],
    ['1e3'],
    ['0x10'],
    ['+1'],
    [' 1'],
    ['1 '],
    ['-'],
    ['١٢'],
    ['000000000000000000000000x'],
  ])('refuses "%s", which is not a decimal int64', (raw) => {
    expect(refusal(() => pipe.transform(raw))).toEqual({
      code: 'validation_failed',
      status: 400,
      message: 'Validation failed: petId must be a decimal integer (int64).',
      details: [{ field: 'petId', message: 'petId must be a decimal integer (int64)' }],
    });
  });

  it('names the field and the resource it is given', () => {
    const orders = new IdPipe('orderId', 'order');

    expect(refusal(() => orders.transform('x')).message).toBe(
      'Validation failed: orderId must be a decimal integer (int64).',
    );
    expect(refusal(() => orders.transform('0')).message).toBe('No order has this id.');
  });
});
