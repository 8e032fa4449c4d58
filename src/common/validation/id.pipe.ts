import { PipeTransform } from '@nestjs/common';
import { ApiException, validationFailed } from '../errors/api-exception';
import { MAX_EXACT_INTEGER, parseDecimalInt64 } from './int64';

/**
 * A resource id from the path: `new IdPipe('petId', 'animal')`. It must be a decimal int64,
 * else 400 `validation_failed`. A well-formed id outside the range ids can take (below 1,
 * above 2^53-1) names no resource: 404 `not_found`, without asking the database. So the
 * handler gets an id that can exist.
 */
export class IdPipe implements PipeTransform<string, number> {
  constructor(
    private readonly field: string,
    private readonly resource: string,
  ) {}

  transform(raw: string): number {
    const id = parseDecimalInt64(raw);
    if (id === undefined) {
      throw validationFailed([
        { field: this.field, message: `${this.field} must be a decimal integer (int64)` },
      ]);
    }
    if (id < 1n || id > BigInt(MAX_EXACT_INTEGER)) {
      throw new ApiException('not_found', `No ${this.resource} has this id.`);
    }
    return Number(id);
  }
}
