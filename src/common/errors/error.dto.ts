import { ApiProperty, ApiSchema } from '@nestjs/swagger';

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
   * Machine-readable error code, stable: validation_failed, invalid_json, bad_request (400),
   * unauthorized (401), not_found (404), method_not_allowed (405), request_timeout (408),
   * idempotency_conflict (409), payload_too_large (413), unsupported_media_type (415),
   * expectation_failed (417), idempotency_key_reused (422), rate_limited (429),
   * headers_too_large (431), internal_error (500), service_unavailable (503).
   * @example "not_found"
   */
  // A plain string: typed as ErrorCode, the plugin would document every code of the table as an
  // enum, codes the service does not send (yet) included.
  code!: string;
  /**
   * Human-readable description of the error.
   * @example "The requested resource could not be found."
   */
  message!: string;
  /**
   * The HTTP status code of the response.
   * @example 404
   */
  @ApiProperty({ type: 'integer', minimum: 400, maximum: 599 })
  status!: number;
  /** For validation errors: each field and the rule it broke. */
  details?: ErrorDetailDto[];
}
