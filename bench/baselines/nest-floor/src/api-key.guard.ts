import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './api-error';

const API_KEYS = new Set(
  (process.env.API_KEYS || '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean),
);

/** `Authorization: Bearer <key>` with a key from API_KEYS, on every route. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const { authorization } = context.switchToHttp().getRequest<IncomingMessage>().headers;
    const match = authorization ? /^Bearer +(\S+) *$/i.exec(authorization) : null;
    if (match === null || !API_KEYS.has(match[1])) {
      throw new ApiError(401, 'unauthorized', 'Missing or invalid API key');
    }
    return true;
  }
}
