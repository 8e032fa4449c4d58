export const REALM = 'petstore';

/**
 * The `WWW-Authenticate` challenge of a 401 without a bearer key, and with a wrong one (RFC 6750):
 * answered by the auth guard, documented with every 401 of the OpenAPI document.
 */
export const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;
export const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;
