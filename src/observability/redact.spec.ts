import { redactUrl } from './redact';

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

  it('copes with a malformed escape in a name', () => {
    expect(redactUrl('/x?%E0%A4%A=1&token=abc')).toBe('/x?%E0%A4%A=1&token=[Redacted]');
  });
});
