import { HttpException } from '@nestjs/common';
import {
  AnyErrorCode,
  errorSpec,
  MAX_ERROR_DETAILS,
  MAX_FIELD_LENGTH,
  MAX_MESSAGE_LENGTH,
} from './error-codes';

export interface ErrorDetail {
  field: string;
  message: string;
}

/** An error the API answers on purpose. Services throw it; the exception filter writes it. */
export class ApiException extends HttpException {
  constructor(
    readonly code: AnyErrorCode,
    message: string = errorSpec(code).message,
    readonly details?: ErrorDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message, errorSpec(code).status);
  }
}

/** 400 `validation_failed`, its message naming every broken rule and `details` each field. */
export function validationFailed(details: ErrorDetail[]): ApiException {
  const bounded = details.slice(0, MAX_ERROR_DETAILS).map((detail) => ({
    field: detail.field.slice(0, MAX_FIELD_LENGTH),
    message: detail.message.slice(0, MAX_MESSAGE_LENGTH),
  }));
  const message = `Validation failed: ${bounded.map((detail) => detail.message).join('; ')}.`;
  return new ApiException('validation_failed', message.slice(0, MAX_MESSAGE_LENGTH), bounded);
}

/** What an error the exception filter does not know means to a client, or undefined (a 500). */
export type ErrorTranslator = (error: unknown) => ApiException | undefined;

/** Where a lower layer (the database) hands the filter its `ErrorTranslator`. */
export const ERROR_TRANSLATOR = Symbol('ERROR_TRANSLATOR');
