import { randomBytes } from 'node:crypto';

/** The characters of a bearer token68 (RFC 7235): what an API key may be made of. */
export const TOKEN68 = '[A-Za-z0-9\\-._~+/]+=*';
export const MIN_API_KEY_LENGTH = 16;

const WHOLE_TOKEN = new RegExp(`^${TOKEN68}$`);
/** `Bearer <token68>`, the scheme name case-insensitive (RFC 7235, RFC 6750). */
const BEARER = new RegExp(`^Bearer +(${TOKEN68}) *$`, 'i');

/** The token of an `Authorization: Bearer <token>` header, or undefined if it holds none. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/** A key the bearer header can carry, and long enough to be a secret. */
export function isWellFormedApiKey(key: string): boolean {
  return key.length >= MIN_API_KEY_LENGTH && WHOLE_TOKEN.test(key);
}

/** 32 bytes from the CSPRNG, URL-safe, with a prefix (`pet_`) that secret scanners can match. */
export function generateApiKey(): string {
  return `pet_${randomBytes(32).toString('base64url')}`;
}
