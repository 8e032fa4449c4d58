import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Inject,
  Logger,
  NotFoundException,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { ApiException, ERROR_TRANSLATOR, ErrorTranslator } from '../common/errors/api-exception';
import { codeForStatus } from '../common/errors/error-codes';
import { ErrorDto } from '../common/errors/error.dto';
import { requestIdOf } from './request-log';
import { RouteIndex } from './route-index';

/** The one writer of error answers, never with internals; the unexpected is logged and answered 500. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private routeIndex: RouteIndex | undefined;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(ERROR_TRANSLATOR) private readonly translate: ErrorTranslator = () => undefined,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const error = this.toApiException(exception, request);

    if (response.headersSent) {
      // Nothing sensible can be written any more: end the exchange rather than hang.
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
    if (exception instanceof NotFoundException) {
      this.routeIndex ??= new RouteIndex(this.adapterHost.httpAdapter.getInstance());
      const allowed = this.routeIndex.allowedMethods(request.path).join(', ');
      if (allowed === '') return new ApiException('not_found');
      const message = `${request.method} is not allowed here; allowed: ${allowed}.`;
      return new ApiException('method_not_allowed', message, undefined, { Allow: allowed });
    }
    if (exception instanceof HttpException) return new ApiException(codeForStatus(exception.getStatus()));
    const translated = this.translate(exception);
    if (translated) return translated;

    // A driver's error may not be this realm's `Error` (a test's sandbox, better-sqlite3's SqliteError).
    const { stack } = (exception ?? {}) as { stack?: unknown };

    this.logger.error(
      { reqId: requestIdOf(request), err: { stack: typeof stack === 'string' ? stack : String(exception) } },
      `Unexpected error on ${request.method} ${(request.route as { path?: string } | undefined)?.path ?? 'unmatched path'}`,
    );
    return new ApiException('internal_error');
  }
}
