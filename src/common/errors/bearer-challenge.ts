import { ApiException } from './api-exception';

export const REALM = 'petstore';

/** The `WWW-Authenticate` challenges of a 401 without a key and with a wrong one (RFC 6750). */
export const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;
export const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;
export const EXPIRED_TOKEN_CHALLENGE = `${INVALID_TOKEN_CHALLENGE}, error_description="The access token expired"`;
export const insufficientScopeChallenge = (scope: string): string =>
  `${BEARER_CHALLENGE}, error="insufficient_scope", scope="${scope}"`;
export const insufficientScopeMessage = (scope: string, holder = 'API key'): string =>
  `The ${holder} lacks the scope ${scope}, which this operation needs.`;

/** The 403 of a key that lacks `scope`, with the challenge that names it. */
export const insufficientScope = (scope: string, message = insufficientScopeMessage(scope)): ApiException =>
  new ApiException('insufficient_scope', message, undefined, {
    'WWW-Authenticate': insufficientScopeChallenge(scope),
  });
