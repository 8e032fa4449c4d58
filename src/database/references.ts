import { ApiException } from '../common/errors/api-exception';
import { errorSpec, ModuleErrorCode } from '../common/errors/error-codes';
import { isForeignKeyViolation } from './dialect';

export interface Reference {
  field: string;
  code: ModuleErrorCode;
  /** The referenced module's `get`: 404 `not_found` when the record does not exist. */
  get: (id: number) => Promise<unknown>;
}

/** 422 with the module's own code (the first one's) naming each field whose record is missing. */
export async function requireReferences(row: object, references: readonly Reference[]): Promise<void> {
  const missing: Reference[] = [];
  for (const reference of present(row, references)) {
    try {
      await reference.get((row as Record<string, number>)[reference.field]);
    } catch (error) {
      if (!(error instanceof ApiException && error.code === 'not_found')) throw error;
      missing.push(reference);
    }
  }
  if (missing.length > 0) throw refused(missing);
}

const present = (row: object, references: readonly Reference[]) =>
  references.filter(({ field }) => typeof (row as Record<string, unknown>)[field] === 'number');

function refused(missing: readonly Reference[]): ApiException {
  const messages = missing.map(({ code }) => errorSpec(code).message);
  const details = missing.map(({ field }, index) => ({ field, message: messages[index] }));
  return new ApiException(missing[0].code, messages.join(' '), details);
}

/** The same answer for a write a foreign key refused (a record deleted since it was checked). */
export async function keepReferences<T>(
  write: Promise<T>,
  row: object,
  references: readonly Reference[],
): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (!isForeignKeyViolation(error)) throw error;
    await requireReferences(row, references);
    // All there again: one was deleted and made anew meanwhile, which ids never are.
    throw refused(present(row, references));
  }
}
