import { CanActivate, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiKeysService } from '../../api-keys/api-keys.service';
import { Metrics } from '../../observability/metrics';
import { ApiException } from '../errors/api-exception';
import { bearerToken } from './api-key.format';
import { ApiKeyStore } from './api-key.store';
import { IS_PUBLIC } from './public.decorator';

export const REALM = 'petstore';
/** The `WWW-Authenticate` challenge of a 401 without a bearer key, and with a wrong one (RFC 6750). */
export const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;
export const INVALID_TOKEN_CHALLENGE = `${BEARER_CHALLENGE}, error="invalid_token"`;

/**
 * The global guard: every route needs a valid bearer API key unless marked `@Public()`: one
 * of `API_KEYS` (constant-time) or a stored key that is not revoked (digest lookup).
 * Guards run before pipes, so an unauthenticated request is 401 before its body is validated.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly configuredKeys: ApiKeyStore,
    private readonly storedKeys: ApiKeysService,
    @Optional() private readonly metrics: Metrics = new Metrics(),
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;

    const header = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    if (!/^bearer(\s|$)/i.test(header)) {
      this.metrics.authFailure('missing');
      throw new ApiException(
        'unauthorized',
        'An API key is required: send Authorization: Bearer <key>.',
        undefined,
        { 'WWW-Authenticate': BEARER_CHALLENGE },
      );
    }
    const token = bearerToken(header);
    const stored =
      token === undefined
        ? 'unknown'
        : this.configuredKeys.isValid(token)
          ? 'valid'
          : await this.storedKeys.check(token);
    if (stored !== 'valid') {
      this.metrics.authFailure(stored === 'revoked' ? 'revoked' : 'invalid');
      throw new ApiException('unauthorized', 'The API key is not valid.', undefined, {
        'WWW-Authenticate': INVALID_TOKEN_CHALLENGE,
      });
    }
    return true;
  }
}
