import { FindOptionsOrder, FindOptionsWhere, MoreThan, ObjectLiteral, Repository } from 'typeorm';
import { decodeCursor, encodeCursor } from '../common/pagination/cursor';
import { Page } from '../common/pagination/page';
import { readWithRetry } from './outage';

/** How a list is narrowed: the TypeORM condition, and the filter value its cursors record. */
export interface PageFilter<E> {
  /** Conditions on columns other than `id` (the page's position is the condition on `id`). */
  where: FindOptionsWhere<E>;
  /** The filter as one string (e.g. the status); a cursor given out under another is refused. */
  value: string | null;
  /** Names the filter in that refusal (e.g. `status`). */
  name: string;
}

/**
 * A page of rows in ascending id order (oldest first), from where `request.cursor` points (400
 * `validation_failed` if it is no cursor given out by the service, or one of a list with another
 * filter; the checksum does not tell collections apart), with the next page's cursor when more
 * rows match (a refused cursor is a rejection, like any other failure). See `findPageAfter`.
 */
export async function findPage<E extends ObjectLiteral & { id: number }>(
  repository: Repository<E>,
  request: { limit: number; cursor?: string },
  filter?: PageFilter<E>,
): Promise<Page<E>> {
  const afterId =
    request.cursor === undefined ? 0 : decodeCursor(request.cursor, filter?.value, filter?.name).afterId;
  return findPageAfter(repository, request.limit, afterId, filter);
}

/**
 * The page of `limit` rows after `afterId` (0 for the first), narrowed by `filter`, with the
 * next page's cursor when more rows match. Keyset pagination: a page costs the same however
 * deep it is (the `id` primary key, or an index on the filter columns plus `id`, serves it).
 * One row more than asked says whether more follow. A transient database failure is retried
 * once (see `readWithRetry`).
 */
export async function findPageAfter<E extends ObjectLiteral & { id: number }>(
  repository: Repository<E>,
  limit: number,
  afterId: number,
  filter?: PageFilter<E>,
): Promise<Page<E>> {
  if (filter && 'id' in filter.where) throw new Error('findPage: a filter must not constrain id');
  const where = {
    ...filter?.where,
    ...(afterId > 0 ? { id: MoreThan(afterId) } : {}),
  } as FindOptionsWhere<E>;
  const rows = await readWithRetry(() =>
    repository.find({ where, order: { id: 'ASC' } as FindOptionsOrder<E>, take: limit + 1 }),
  );
  const items = rows.slice(0, limit);
  if (rows.length <= limit) return { items };
  return {
    items,
    nextCursor: encodeCursor({ afterId: items[items.length - 1].id, filter: filter?.value ?? null }),
  };
}
