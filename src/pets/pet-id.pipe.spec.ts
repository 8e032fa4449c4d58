import { ApiException } from '../common/errors/api-exception';
import { PetIdPipe } from './pet-id.pipe';

describe('PetIdPipe', () => {
  const pipe = new PetIdPipe();

  it.each([
    ['1', 1],
    ['42', 42],
    ['007', 7],
    ['9007199254740991', 9007199254740991],
  ])('turns %s into the id %d', (raw, id) => {
    expect(pipe.transform(raw)).toBe(id);
  });

  it.each([['0'], ['-0'], ['-5'], ['9007199254740992'], ['9223372036854775807'], ['-9223372036854775808']])(
    'answers %s, an int64 no animal can have, with null (404)',
    (raw) => {
      expect(pipe.transform(raw)).toBeNull();
    },
  );

  it.each([
    ['9223372036854775808'],
    ['-9223372036854775809'],
    ['99999999999999999999'],
    ['123456789012345678901'],
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
  ])('refuses "%s", which is not a decimal int64', (raw) => {
    let thrown: unknown;
    try {
      pipe.transform(raw);
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(ApiException);
    const error = thrown as ApiException;
    expect({
      code: error.code,
      status: error.getStatus(),
      message: error.message,
      details: error.details,
    }).toEqual({
      code: 'validation_failed',
      status: 400,
      message: 'Validation failed: petId must be a decimal integer (int64).',
      details: [{ field: 'petId', message: 'petId must be a decimal integer (int64)' }],
    });
  });
});
