/** A bearer token68 (RFC 7235). */
export const TOKEN68 = '[A-Za-z0-9\\-._~+/]+=*';
export const MIN_API_KEY_LENGTH = 16;

const WHOLE_TOKEN = new RegExp(`^${TOKEN68}$`);

export function isWellFormedApiKey(key: string): boolean {
  return key.length >= MIN_API_KEY_LENGTH && WHOLE_TOKEN.test(key);
}
