import { applyDecorators, PipeTransform } from '@nestjs/common';
import { ApiParam, ApiProperty } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { ApiException, invalidField } from '../errors/api-exception';
import { MAX_EXACT_INTEGER } from './int64';

/** An id no row can have (below 1, above 2^53-1) is 404 without asking the database. */
export class IdPipe implements PipeTransform<string, number> {
  constructor(
    private readonly field: string,
    private readonly resource: string,
  ) {}

  transform(raw: string): number {
    // Up to 15 digits is below 2^53: the common case, without BigInt.
    if (/^[1-9]\d{0,14}$/.test(raw)) return Number(raw);
    const digits = /^(-?)0*(\d{1,19})$/.exec(raw);
    const id = digits ? BigInt(digits[1] + digits[2]) : undefined;
    if (id === undefined || id < -(2n ** 63n) || id >= 2n ** 63n)
      throw invalidField(this.field, `${this.field} must be a decimal integer (int64)`);
    if (id < 1n || id > BigInt(MAX_EXACT_INTEGER))
      throw new ApiException('not_found', `No ${this.resource} has this id.`);
    return Number(id);
  }
}

export function ApiIdParam(field: string, resource: string): MethodDecorator {
  return ApiParam({
    name: field,
    description:
      `Identifier of the ${resource}. Not a decimal int64: 400; ` +
      `an int64 no ${resource} has (0, negative, unknown): 404.`,
    schema: { type: 'integer', format: 'int64' },
  });
}

export function IsId(): PropertyDecorator {
  const range = { message: `$property must be from 1 to ${MAX_EXACT_INTEGER}` };
  // The type check first: validation stops at the first rule a property breaks.
  return applyDecorators(
    IsInt({ message: '$property must be an integer' }),
    Max(MAX_EXACT_INTEGER, range),
    Min(1, range),
    ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: MAX_EXACT_INTEGER }),
  );
}
