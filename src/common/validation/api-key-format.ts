/** The characters of a bearer token68 (RFC 7235): what an API key may be made of. */
export const TOKEN68 = '[A-Za-z0-9\\-._~+/]+=*';
export const MIN_API_KEY_LENGTH = 16;

const WHOLE_TOKEN = new RegExp(`^${TOKEN68}$`);

/** A key the bearer header can carry, long enough to be a secret (`API_KEYS` is checked by it). */
export function isWellFormedApiKey(key: string): boolean {
  return key.length >= MIN_API_KEY_LENGTH && WHOLE_TOKEN.test(key);
}
