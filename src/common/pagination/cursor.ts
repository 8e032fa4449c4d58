import { createHash } from 'node:crypto';
import { validationFailed } from '../errors/api-exception';

/** Where a page starts: after this id, in the list narrowed by this filter (null for none). */
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
 * An opaque page position with a checksum, so that a cut or edited cursor is refused rather than
 * read wrongly. No signature is needed: a forged "after id N" grants nothing a key cannot read.
 */
export function encodeCursor(cursor: PageCursor): string {
  const payload = Buffer.from(JSON.stringify([VERSION, cursor.afterId, cursor.filter])).toString('base64url');
  return `${payload}.${check(payload)}`;
}

const invalid = (message: string) => validationFailed([{ field: 'cursor', message }]);

/** The position in a cursor of the list narrowed by `filter`; 400 if tampered with or of another filter. */
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
