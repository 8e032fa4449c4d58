import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { TOKEN68 } from '../common/validation/api-key-format';
import { BEARER_CHALLENGE, INVALID_TOKEN_CHALLENGE } from '../common/errors/bearer-challenge';
import { Metrics } from '../observability/metrics';
import { ApiKeyStore, digest } from './api-key.store';
import { ApiKeysService, KeyVerdict } from './api-keys.service';
import { setCaller } from './caller';
import { FAILED_AUTH_BUDGET, FailedAuthBudget, Refund } from './failed-auth-budget';
import { IS_PUBLIC } from './public.decorator';

const BEARER_SCHEME = /^bearer(\s|$)/i;
/** `Bearer <token68>`, the scheme name case-insensitive (RFC 7235, RFC 6750). */
const BEARER = new RegExp(`^Bearer +(${TOKEN68}) *$`, 'i');

/** Without a valid key, a request spends its address's abuse budget before any lookup; valid ones refund. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly configuredKeys: ApiKeyStore,
    private readonly storedKeys: ApiKeysService,
    @Optional() private readonly metrics: Metrics = new Metrics(),
    @Optional() @Inject(FAILED_AUTH_BUDGET) private readonly budget?: FailedAuthBudget,
  ) {}

  /** Per controller and handler: an inherited handler may be public in one controller only. */
  private readonly publicRoutes = new WeakMap<object, WeakMap<object, boolean>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.isPublic(context)) return true;

    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers.authorization;
    const token = bearerToken(header);
    let verdict: KeyVerdict = 'unknown';
    let refund: Refund | undefined;
    if (token !== undefined) {
      const keyDigest = digest(token);
      const configuredOwner = this.configuredKeys.ownerOf(keyDigest);
      if (configuredOwner !== undefined) {
        setCaller(request, { owner: configuredOwner });
        return true;
      }
      const owner = keyDigest.toString('hex');
      if (!this.storedKeys.isKnown(owner)) refund = await this.reserve(request);
      try {
        verdict = await this.storedKeys.verifyDigest(owner);
      } catch (error) {
        // The lookup failed (the database is away): not a failure of the key.
        await refund?.();
        throw error;
      }
      if (verdict === 'valid') {
        await refund?.();
        setCaller(request, { owner });
        return true;
      }
    }
    if (!refund) await this.reserve(request);
    if (header === undefined || !BEARER_SCHEME.test(header)) {
      this.metrics.authFailure('missing');
      throw new ApiException('unauthorized', undefined, undefined, { 'WWW-Authenticate': BEARER_CHALLENGE });
    }
    this.metrics.authFailure(verdict === 'revoked' ? 'revoked' : 'invalid');
    throw new ApiException('unauthorized', 'The API key is not valid.', undefined, {
      'WWW-Authenticate': INVALID_TOKEN_CHALLENGE,
    });
  }

  private isPublic(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.publicRoutes.get(controller);
    if (handlers === undefined) {
      handlers = new WeakMap();
      this.publicRoutes.set(controller, handlers);
    }
    let isPublic = handlers.get(handler);
    if (isPublic === undefined) {
      isPublic =
        this.reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, controller]) === true;
      handlers.set(handler, isPublic);
    }
    return isPublic;
  }

  private async reserve(request: Request): Promise<Refund | undefined> {
    const reserved = await this.budget?.reserve(addressOf(request));
    if (reserved instanceof ApiException) {
      this.metrics.rateLimited('auth_failures');
      throw reserved;
    }
    return reserved;
  }
}

function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

function addressOf(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? 'unknown';
}
