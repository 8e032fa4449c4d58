import { HttpException } from '@nestjs/common';
import {
  AnyErrorCode,
  errorSpec,
  MAX_ERROR_DETAILS,
  MAX_FIELD_LENGTH,
  MAX_MESSAGE_LENGTH,
} from './error-codes';
import type { ErrorDetailDto } from './error.dto';

export class ApiException extends HttpException {
  constructor(
    readonly code: AnyErrorCode,
    message: string = errorSpec(code).message,
    readonly details?: ErrorDetailDto[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message, errorSpec(code).status);
  }
}

export function validationFailed(details: ErrorDetailDto[]): ApiException {
  const bounded = details.slice(0, MAX_ERROR_DETAILS).map((detail) => ({
    field: detail.field.slice(0, MAX_FIELD_LENGTH),
    message: detail.message.slice(0, MAX_MESSAGE_LENGTH),
  }));
  const message = `Validation failed: ${bounded.map((detail) => detail.message).join('; ')}.`;
  return new ApiException('validation_failed', message.slice(0, MAX_MESSAGE_LENGTH), bounded);
}

/** 400 `validation_failed` naming one field and the rule it breaks. */
export const invalidField = (field: string, message: string) => validationFailed([{ field, message }]);

/** How a lower layer (the database) tells the filter what an unknown error means; undefined: a 500. */
export type ErrorTranslator = (error: unknown) => ApiException | undefined;
export const ERROR_TRANSLATOR = Symbol('ERROR_TRANSLATOR');
