import { hash } from 'node:crypto';
import { invalidField } from '../errors/api-exception';

export interface PageCursor {
  afterId: number;
  filter: string | null;
}

const VERSION = 1;

function check(payload: string): string {
  return hash('sha256', `petstore-cursor:${payload}`, 'base64url').slice(0, 16);
}

/** A checksum, not a signature: a forged "after id N" grants nothing a key cannot read. */
export function encodeCursor(cursor: PageCursor): string {
  const payload = Buffer.from(JSON.stringify([VERSION, cursor.afterId, cursor.filter])).toString('base64url');
  return `${payload}.${check(payload)}`;
}

const invalid = (message: string) => invalidField('cursor', message);
const NOT_OURS = 'cursor is not a cursor this service gave out (use the next link as it is)';

export function decodeCursor(raw: string, filter: string | null | undefined, filterName = ''): PageCursor {
  const [payload, checksum, ...rest] = raw.split('.');
  if (rest.length > 0 || !payload || checksum !== check(payload)) throw invalid(NOT_OURS);
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const [version, afterId, cursorFilter] = Array.isArray(decoded) ? (decoded as unknown[]) : [];
  if (version !== VERSION || !Number.isSafeInteger(afterId) || (afterId as number) < 0)
    throw invalid(NOT_OURS);
  if (cursorFilter !== (filter ?? null))
    throw invalid(`cursor belongs to a list with another ${filterName ? `${filterName} ` : ''}filter`);
  return { afterId: afterId as number, filter: filter ?? null };
}
