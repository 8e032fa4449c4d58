import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { databaseOutageCause, OutageLog, serviceUnavailable } from '../../database/outage';
import { RouteIndex } from '../http/route-index';
import { requestIdOf } from '../logging/request-log';
import { ApiException } from './api-exception';
import { codeForStatus } from './error-codes';
import { ErrorDto } from './error.dto';

/**
 * The one place that writes error responses: every error, whoever raised it, leaves as the
 * Error body `{code, message, status}` with no internals. Unexpected errors are logged with
 * their stack and answered `internal_error`; a database that is unavailable is answered 503
 * `service_unavailable` with `Retry-After`, and logged once per outage.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private readonly outages = new OutageLog();
  private routeIndex: RouteIndex | undefined;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = this.toApiException(exception, request);

    if (response.headersSent) {
      // Nothing sensible can be written any more: end the exchange instead of hanging.
      response.destroy();
      return;
    }
    const body: ErrorDto = {
      code: error.code,
      message: error.message,
      status: error.getStatus(),
      ...(error.details?.length ? { details: error.details } : {}),
    };
    response.status(body.status).set(error.headers).json(body);
  }

  private toApiException(exception: unknown, request: Request): ApiException {
    if (exception instanceof ApiException) return exception;
    if (exception instanceof NotFoundException) return this.noSuchRoute(request);
    if (exception instanceof HttpException) return new ApiException(codeForStatus(exception.getStatus()));
    const outage = databaseOutageCause(exception);
    if (outage !== undefined) {
      this.outages.report(outage);
      return serviceUnavailable();
    }

    const stack = exception instanceof Error ? exception.stack : String(exception);
    this.logger.error(
      { reqId: requestIdOf(request), err: { stack } },
      `Unexpected error on ${request.method} ${(request.route as { path?: string } | undefined)?.path ?? 'unmatched path'}`,
    );
    return new ApiException('internal_error');
  }

  /** The router found no handler: 405 if the path exists with other methods, else 404. */
  private noSuchRoute(request: Request): ApiException {
    this.routeIndex ??= new RouteIndex(this.adapterHost.httpAdapter.getInstance());
    const allowed = this.routeIndex.allowedMethods(request.path);
    if (allowed.length === 0) return new ApiException('not_found');
    return new ApiException(
      'method_not_allowed',
      `${request.method} is not allowed here; allowed: ${allowed.join(', ')}.`,
      undefined,
      { Allow: allowed.join(', ') },
    );
  }
}
