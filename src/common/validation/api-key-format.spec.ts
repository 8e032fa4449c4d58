import { isWellFormedApiKey, MIN_API_KEY_LENGTH, TOKEN68 } from './api-key-format';

describe('isWellFormedApiKey', () => {
  it('requires at least 16 characters', () => {
    expect(MIN_API_KEY_LENGTH).toBe(16);
    expect(isWellFormedApiKey('abcdefghijklmnop')).toBe(true);
    expect(isWellFormedApiKey('abcdefghijklmno')).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });

  it.each([
    ['letters and digits', 'ABCDEFGHabcdefgh01234567'],
    ['every token68 punctuation mark', 'key-with.all_the~marks+and/slash'],
    ['trailing padding', 'abcdefghijklmnop=='],
    ['a generated key', 'pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
  ])('accepts %s', (_label, key) => {
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it.each([
    ['a space inside', 'secret key 0123456789'],
    ['a leading space', ' secretkey0123456789'],
    ['a trailing newline', 'secretkey0123456789\n'],
    ['a forbidden character', 'secret$key0123456789'],
    ['a comma', 'secret,key0123456789'],
    ['a quote', 'secret"key0123456789'],
    ['padding in the middle', 'secret=key0123456789'],
    ['padding only', '================'],
    ['padding first', '=secretkey0123456789'],
    ['non-ASCII', 'sécretkey0123456789'],
  ])('rejects %s', (_label, key) => {
    expect(isWellFormedApiKey(key)).toBe(false);
  });

  it('exports the token68 pattern the bearer header is parsed with', () => {
    const whole = new RegExp(`^${TOKEN68}$`);

    expect(whole.test('abc-._~+/XYZ09==')).toBe(true);
    expect(whole.test('abc def')).toBe(false);
    expect(whole.test('=abc')).toBe(false);
  });
});
