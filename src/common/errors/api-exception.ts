import { HttpException } from '@nestjs/common';
import { ERROR_CODES, ErrorCode } from './error-codes';

export interface ErrorDetail {
  field: string;
  message: string;
}

/**
 * An error the API answers on purpose: its code, a message safe to show, optional
 * per-field details and response headers. Services throw it; the filter writes it.
 */
export class ApiException extends HttpException {
  constructor(
    readonly code: ErrorCode,
    message: string = ERROR_CODES[code].message,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message, ERROR_CODES[code].status);
  }
}
