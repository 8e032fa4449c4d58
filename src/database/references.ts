import { ApiException } from '../common/errors/api-exception';
import { ModuleErrorCode } from '../common/errors/error-codes';
import { isForeignKeyViolation } from './dialect';

/** A field of a body that refers to a record of another module, and the code of "no such record". */
export interface Reference {
  field: string;
  code: ModuleErrorCode;
}

function unknown(references: readonly Reference[]): ApiException {
  const details = references.map(({ field }) => ({ field, message: `${field} names no record` }));
  const fields = references.map(({ field }) => `\`${field}\``).join(' or ');
  return new ApiException(references[0].code, `${fields} names no record.`, details);
}

/**
 * What `lookup` (the referenced module's `get`) found; its 404 becomes the referencing module's
 * code, naming the field, so a client can tell a missing reference from a missing resource.
 */
export async function requireReference<T>(lookup: Promise<T>, reference: Reference): Promise<T> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof ApiException && error.code === 'not_found') throw unknown([reference]);
    throw error;
  }
}

/** A write whose foreign keys refused it (a referenced record deleted since it was checked): the same answer. */
export async function keepReferences<T>(write: Promise<T>, references: readonly Reference[]): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isForeignKeyViolation(error)) throw unknown(references);
    throw error;
  }
}
