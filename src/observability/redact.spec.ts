import { protectSecrets, redactUrl } from './redact';

describe('redactUrl', () => {
  it('leaves a URL without a query alone', () => {
    expect(redactUrl('/v1/pets/12')).toBe('/v1/pets/12');
  });

  it('leaves ordinary query parameters as sent', () => {
    expect(redactUrl('/v1/pets?status=sold&limit=5&flag')).toBe('/v1/pets?status=sold&limit=5&flag');
  });

  it.each([
    ['api_key', '/v1/pets?api_key=pet_abc123&limit=5', '/v1/pets?api_key=[Redacted]&limit=5'],
    ['apiKey', '/v1/pets?apiKey=pet_abc123', '/v1/pets?apiKey=[Redacted]'],
    ['key', '/v1/pets?key=pet_abc123', '/v1/pets?key=[Redacted]'],
    ['access_token', '/v1/pets?limit=1&access_token=abc', '/v1/pets?limit=1&access_token=[Redacted]'],
    ['Authorization', '/v1/pets?Authorization=Bearer%20abc', '/v1/pets?Authorization=[Redacted]'],
    ['password', '/x?password=hunter2', '/x?password=[Redacted]'],
    ['secret', '/x?client_secret=s3', '/x?client_secret=[Redacted]'],
    ['an encoded name', '/x?api%5Fkey=abc', '/x?api%5Fkey=[Redacted]'],
    ['a repeated name', '/x?key=a&key=b', '/x?key=[Redacted]&key=[Redacted]'],
  ])('redacts the value of %s', (_label, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each([
    ['in the path', '/v1/pets/pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/v1/pets/[Redacted]'],
    [
      'under a harmless name',
      '/v1/pets?k=pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/v1/pets?k=[Redacted]',
    ],
    [
      'bearer',
      '/v1/pets?bearer=pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/v1/pets?bearer=[Redacted]',
    ],
    [
      'after a semicolon',
      '/v1/pets?x=1;api_key=pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/v1/pets?x=1;api_key=[Redacted]',
    ],
    ['escaped', '/v1/pets/%70et_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/v1/pets/[Redacted]'],
    ['as a bare query', '/v1/pets?pet_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/v1/pets?[Redacted]'],
    [
      'a configured key anywhere',
      '/v1/configured-secret-0123456789/x?y=configured-secret-0123456789',
      '/v1/[Redacted]/x?y=[Redacted]',
    ],
  ])('redacts a key-shaped value %s', (_label, url, expected) => {
    protectSecrets(['configured-secret-0123456789', 'key_two.0123456789~+/=']);
    expect(redactUrl(url)).toBe(expected);
  });

  it('copes with a malformed escape in a name', () => {
    expect(redactUrl('/x?%E0%A4%A=1&token=abc')).toBe('/x?%E0%A4%A=1&token=[Redacted]');
  });
});
