export const REALM = 'petstore';

/** The `WWW-Authenticate` challenges of a 401 without a key and with a wrong one (RFC 6750). */
export const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;
export const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;
