import { ApiSchema } from '@nestjs/swagger';
import { ErrorCode } from './error-codes';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  /** The request field that broke a rule (`name`, `categoryId`, `limit`, `body`, ...). */
  field!: string;
  /** The rule it broke. */
  message!: string;
}

/** The body of every error response. */
@ApiSchema({ name: 'Error' })
export class ErrorDto {
  /**
   * Machine-readable error code: validation_failed, invalid_json, bad_request, unauthorized,
   * not_found, method_not_allowed, request_timeout, payload_too_large, unsupported_media_type,
   * expectation_failed, rate_limited, headers_too_large, internal_error.
   * @example "not_found"
   */
  code!: ErrorCode;
  /**
   * Human-readable description of the error.
   * @example "The requested resource could not be found."
   */
  message!: string;
  /**
   * The HTTP status code of the response.
   * @example 404
   */
  status!: number;
  /** For validation errors: each field and the rule it broke. */
  details?: ErrorDetailDto[];
}
