import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { errorCodes, MAX_ERROR_DETAILS, MAX_FIELD_LENGTH, MAX_MESSAGE_LENGTH } from './error-codes';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  /** The request field that broke a rule (`name`, `categoryId`, `limit`, `body`, ...). */
  @ApiProperty({ maxLength: MAX_FIELD_LENGTH })
  field!: string;
  /** The rule it broke. */
  @ApiProperty({ maxLength: MAX_MESSAGE_LENGTH })
  message!: string;
}

/** The body of every error response. */
@ApiSchema({ name: 'Error' })
export class ErrorDto {
  @ApiProperty({
    enum: errorCodes(),
    enumName: 'ErrorCode',
    description:
      'Machine-readable error code, stable; the table in the API description says when each is answered.',
    example: 'not_found',
  })
  code!: string;
  /**
   * Human-readable description of the error.
   * @example "The requested resource could not be found."
   */
  @ApiProperty({ maxLength: MAX_MESSAGE_LENGTH })
  message!: string;
  /**
   * The HTTP status code of the response.
   * @example 404
   */
  @ApiProperty({ type: 'integer', format: 'int32', minimum: 400, maximum: 599 })
  status!: number;
  /** For validation errors: each field and the rule it broke. */
  @ApiProperty({ type: [ErrorDetailDto], maxItems: MAX_ERROR_DETAILS, required: false })
  details?: ErrorDetailDto[];
}
