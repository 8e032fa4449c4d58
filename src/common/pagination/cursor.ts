import { createHash } from 'node:crypto';
import { validationFailed } from '../errors/api-exception';

/**
 * Where a page starts: after this id, in the list narrowed by this filter (null for none).
 * A list with several filters folds them into one string (e.g. joined with `|`).
 */
export interface PageCursor {
  afterId: number;
  filter: string | null;
}

const VERSION = 1;
const CHECK_LENGTH = 16;

function check(payload: string): string {
  return createHash('sha256').update(`petstore-cursor:${payload}`).digest('base64url').slice(0, CHECK_LENGTH);
}

/**
 * An opaque page position with a checksum: a cursor that was cut, mistyped or edited by hand
 * is refused rather than silently read wrongly. The checksum is not a signature (no secret is
 * involved), and needs none: a cursor only says "after id N" in a list everyone with a key may
 * read in full, so a forged one grants nothing. Every keyset-paged list uses it.
 */
export function encodeCursor(cursor: PageCursor): string {
  const payload = Buffer.from(JSON.stringify([VERSION, cursor.afterId, cursor.filter])).toString('base64url');
  return `${payload}.${check(payload)}`;
}

const invalid = (message: string) => validationFailed([{ field: 'cursor', message }]);

/**
 * The position in a cursor for a list narrowed by `filter` (undefined or null for none); 400
 * `validation_failed` if it was tampered with or belongs to a list with another filter.
 * `filterName` names the filter in that message (e.g. `status`).
 */
export function decodeCursor(raw: string, filter: string | null | undefined, filterName = ''): PageCursor {
  const [payload, checksum, ...rest] = raw.split('.');
  if (rest.length > 0 || !payload || checksum !== check(payload)) {
    throw invalid('cursor is not a cursor this service gave out (use the next link as it is)');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const [version, afterId, cursorFilter] = Array.isArray(decoded) ? (decoded as unknown[]) : [];
  if (version !== VERSION || !Number.isSafeInteger(afterId) || (afterId as number) < 0) {
    throw invalid('cursor is not a cursor this service gave out (use the next link as it is)');
  }
  if (cursorFilter !== (filter ?? null)) {
    throw invalid(`cursor belongs to a list with another ${filterName ? `${filterName} ` : ''}filter`);
  }
  return { afterId: afterId as number, filter: filter ?? null };
}
