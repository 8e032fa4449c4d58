import {
  CanActivate,
  ExecutionContext,
  Inject,
  Injectable,
  Optional,
  RequestMethod,
  Type,
} from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiException } from '../common/errors/api-exception';
import { TOKEN68 } from '../common/validation/api-key-format';
import {
  BEARER_CHALLENGE,
  EXPIRED_TOKEN_CHALLENGE,
  insufficientScope,
  insufficientScopeMessage,
  INVALID_TOKEN_CHALLENGE,
} from '../common/errors/bearer-challenge';
import { collectionScope, EVERY_SCOPE, REQUIRED_SCOPE } from '../common/scopes';
import { serviceUnavailable } from '../database/outage';
import { addToLogLine, nameCaller } from '../http/request-log';
import { AuthFailureReason, Metrics } from '../observability/metrics';
import { AccessTokens, looksLikeJwt, UNREACHABLE_REFETCH_MS } from './access-tokens';
import { ApiKeyStore, digest } from './api-key.store';
import { ApiKeysService, holds, Refusal } from './api-keys.service';
import { callerOf, setCaller } from './caller';
import { FAILED_AUTH_BUDGET, FailedAuthBudget, Refund } from './failed-auth-budget';
import { IS_PUBLIC } from './public.decorator';

const BEARER_SCHEME = /^bearer(\s|$)/i;
const MISSING_KEY_OR_TOKEN =
  'An API key or access token is required: send Authorization: Bearer <key or token>.';
/** `Bearer <token68>`, the scheme name case-insensitive (RFC 7235, RFC 6750). */
const BEARER = new RegExp(`^Bearer +(${TOKEN68}) *$`, 'i');

/** The scope a route needs (`@RequiredScope`, else its collection's read or write), null if public. */
export function routeScope(controller: Type, handler: object, reflector = new Reflector()): string | null {
  const targets = [handler, controller] as Type[];
  if (reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, targets)) return null;
  const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
  return (
    reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets) ??
    collectionScope(String(Reflect.getMetadata(PATH_METADATA, controller)), method)
  );
}

/**
 * Who is calling; the scope is ScopeGuard's. Without a valid key, a request spends its address's
 * abuse budget before any lookup; valid ones refund.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly configuredKeys: ApiKeyStore,
    private readonly storedKeys: ApiKeysService,
    @Optional() private readonly metrics: Metrics = new Metrics(),
    @Optional() @Inject(FAILED_AUTH_BUDGET) private readonly budget?: FailedAuthBudget,
    @Optional() @Inject(AccessTokens) private readonly accessTokens: AccessTokens | null = null,
  ) {}

  /** Per controller and handler (an inherited handler may be public in one controller only): null if public. */
  private readonly routes = new WeakMap<object, WeakMap<object, string | null>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const scope = this.scopeOf(context);
    if (scope === null) return true;

    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers.authorization;
    const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
    const operation = context.getHandler().name;
    const accessToken = token !== undefined && this.accessTokens !== null && looksLikeJwt(token);
    let refusal: Refusal = 'unknown';
    let refund: Refund | undefined;
    if (token !== undefined) {
      const keyDigest = digest(token);
      const configuredOwner = this.configuredKeys.ownerOf(keyDigest);
      if (configuredOwner !== undefined) {
        setCaller(request, { owner: configuredOwner, scopes: EVERY_SCOPE, operation });
        return true;
      }
      if (accessToken) {
        const verdict = await this.verifyToken(request, token, operation);
        if (verdict === true) return true;
        refusal = verdict;
      } else {
        const owner = keyDigest.toString('hex');
        if (!this.storedKeys.isKnown(owner)) refund = await this.reserve(request);
        const verdict = await this.storedKeys.verifyDigest(owner).catch(async (error: unknown) => {
          // The lookup failed (the database is away): not a failure of the key.
          await refund?.();
          throw error;
        });
        if (typeof verdict === 'object') {
          await refund?.();
          const { id: keyId, name: keyName, scopes } = verdict;
          setCaller(request, { owner, keyId, keyName, scopes, operation });
          return true;
        }
        refusal = verdict;
      }
    }
    if (!refund) await this.reserve(request);
    if (header === undefined || !BEARER_SCHEME.test(header))
      throw this.refused('missing', BEARER_CHALLENGE, this.accessTokens ? MISSING_KEY_OR_TOKEN : undefined);
    const what = accessToken ? 'access token' : 'API key';
    if (refusal === 'expired')
      throw this.refused('expired', EXPIRED_TOKEN_CHALLENGE, `The ${what} has expired.`);
    const reason = refusal === 'revoked' ? 'revoked' : 'invalid';
    throw this.refused(reason, INVALID_TOKEN_CHALLENGE, `The ${what} is not valid.`);
  }

  /** An access token: the caller it names, or why not (it spends the address's budget only when refused). */
  private async verifyToken(request: Request, token: string, operation: string): Promise<Refusal | true> {
    const verdict = await this.accessTokens!.verify(token);
    if (verdict === 'unavailable')
      throw serviceUnavailable(
        'The identity provider cannot be reached to verify the token. Retry later.',
        UNREACHABLE_REFETCH_MS / 1000,
      );
    if ('reason' in verdict) {
      addToLogLine(request, { tokenRefused: verdict.reason });
      return verdict.expired ? 'expired' : 'unknown';
    }
    const { owner, subject, clientId, scopes } = verdict;
    setCaller(request, { owner, subject, clientId, scopes, operation });
    nameCaller(request, subject, clientId);
    return true;
  }

  private refused(reason: AuthFailureReason, challenge: string, message?: string): ApiException {
    this.metrics.authFailure(reason);
    return new ApiException('unauthorized', message, undefined, { 'WWW-Authenticate': challenge });
  }

  scopeOf(context: ExecutionContext): string | null {
    const handler = context.getHandler();
    const controller = context.getClass();
    const handlers = this.routes.get(controller) ?? new WeakMap<object, string | null>();
    let scope = handlers.get(handler);
    if (scope === undefined) {
      scope = routeScope(controller, handler, this.reflector);
      handlers.set(handler, scope);
      this.routes.set(controller, handlers);
    }
    return scope;
  }

  private async reserve(request: Request): Promise<Refund | undefined> {
    const reserved = await this.budget?.reserve(request.ip ?? request.socket.remoteAddress ?? 'unknown');
    if (reserved instanceof ApiException) {
      this.metrics.rateLimited('auth_failures');
      throw reserved;
    }
    return reserved;
  }
}

/**
 * The scope the route needs, checked after the per-key rate limit: a key is counted, and told its
 * budget, whatever it is answered.
 */
@Injectable()
export class ScopeGuard implements CanActivate {
  constructor(
    private readonly keys: ApiKeyGuard,
    @Optional() private readonly metrics: Metrics = new Metrics(),
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const scope = this.keys.scopeOf(context);
    const caller = callerOf(context.switchToHttp().getRequest<Request>());
    if (scope === null || (caller && holds(caller.scopes, scope))) return true;
    this.metrics.authFailure('insufficient_scope');
    const holder = caller?.subject === undefined ? 'API key' : 'access token';
    throw insufficientScope(scope, insufficientScopeMessage(scope, holder));
  }
}
