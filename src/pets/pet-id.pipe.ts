import { Injectable, PipeTransform } from '@nestjs/common';
import { validationFailed } from '../common/errors/api-exception';
import { MAX_EXACT_INTEGER, parseDecimalInt64 } from '../common/validation/int64';

/**
 * `petId` must be a decimal int64, else 400. A well-formed id outside the range ids can take
 * (below 1, above 2^53-1) is answered as unknown: `null`, which the service treats as 404.
 */
@Injectable()
export class PetIdPipe implements PipeTransform<string, number | null> {
  transform(raw: string): number | null {
    const id = parseDecimalInt64(raw);
    if (id === undefined) {
      throw validationFailed([{ field: 'petId', message: 'petId must be a decimal integer (int64)' }]);
    }
    return id >= 1n && id <= BigInt(MAX_EXACT_INTEGER) ? Number(id) : null;
  }
}
