import { ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerRequest } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { callerOf } from '../auth/caller';
import { IS_PUBLIC } from '../auth/public.decorator';
import { ApiException } from '../common/errors/api-exception';
import { RATE_LIMIT_POLICY } from '../common/openapi/headers';
import { Metrics } from '../observability/metrics';

const POLICY = `"${RATE_LIMIT_POLICY}"`;

/** Per API key: the authentication guard runs first and records the caller. Headers: IETF RateLimit draft. */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  @Optional() @Inject(Metrics) private readonly metrics?: Metrics;

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    return Promise.resolve(Boolean(this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)));
  }

  protected override async handleRequest(props: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration } = props;
    const request = context.switchToHttp().getRequest<Request>();
    const response = context.switchToHttp().getResponse<Response>();
    const name = throttler.name ?? RATE_LIMIT_POLICY;
    const caller = callerOf(request);
    const owner = caller?.owner;
    const tracker = owner ? `key:${owner}` : `ip:${request.ip ?? 'unknown'}`;
    const key = `petstore:ratelimit:${name}:${tracker}`;
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);
    const windowSeconds = Math.round(ttl / 1000);
    const reset = record.isBlocked ? record.timeToBlockExpire : record.timeToExpire;
    response.setHeader('RateLimit-Policy', `${POLICY};q=${limit};w=${windowSeconds}`);
    response.setHeader('RateLimit', `${POLICY};r=${Math.max(0, limit - record.totalHits)};t=${reset}`);
    if (record.isBlocked) {
      this.metrics?.rateLimited('per_key');
      const per = caller?.subject === undefined ? 'API key' : 'token subject';
      throw new ApiException(
        'rate_limited',
        `Too many requests: at most ${limit} per ${windowSeconds} seconds per ${per}. Retry after ${reset} seconds.`,
        undefined,
        { 'Retry-After': String(reset) },
      );
    }
    return true;
  }
}
