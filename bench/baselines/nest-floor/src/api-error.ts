import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { ServerResponse } from 'node:http';

/** An error answer: its status, and the code and message of its Error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const CODES: Record<number, string> = {
  400: 'invalid_body',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
};

/**
 * Every error, ours or Nest's (unknown route, body parser), as an Error body
 * `{ code, message, status }`. Runs only when something was thrown: no cost on a good request.
 */
@Catch()
export class ErrorBodyFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<ServerResponse>();
    let error: ApiError;
    if (exception instanceof ApiError) {
      error = exception;
    } else if (exception instanceof HttpException) {
      const status = exception.getStatus();
      error = new ApiError(status, CODES[status] ?? 'bad_request', exception.message);
    } else {
      console.error(exception);
      error = new ApiError(500, 'internal_error', 'Internal server error');
    }
    const json = JSON.stringify({ code: error.code, message: error.message, status: error.status });
    if (error.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
    res
      .writeHead(error.status, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(json),
      })
      .end(json);
  }
}
