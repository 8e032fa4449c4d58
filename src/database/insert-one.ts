import { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/** Work that must commit together with a new row: how an idempotent create stores its answer. */
export type WithCreated<E> = (manager: EntityManager, created: E) => Promise<void>;

/**
 * Inserts one row and returns it with the id the database assigned.
 *
 * On PostgreSQL the insert runs in a transaction that first takes an advisory lock of the table
 * (across every instance): its sequence hands out ids before commit, and keyset pages must never
 * see a smaller id appear behind one they have passed, so inserts into one table commit in id
 * order (as `PetsService` does for pets). `inTransaction` runs inside that transaction: both
 * commit or neither, even when the connection breaks before the commit is confirmed. SQLite has
 * one writer, so ids are committed in order; it offers no transaction of its own (TypeORM shares
 * one connection among all requests, so other requests' statements would join it), so
 * `inTransaction` is not called there; a failed SQLite statement has not committed, so there is
 * no unknown outcome to guard against.
 */
export async function insertOne<E extends ObjectLiteral & { id: number }>(
  repository: Repository<E>,
  row: Omit<E, 'id'>,
  inTransaction?: WithCreated<E>,
): Promise<E> {
  const created = (result: { identifiers: ObjectLiteral[] }) =>
    ({ ...row, id: Number(result.identifiers[0].id) }) as unknown as E;
  const values = row as unknown as QueryDeepPartialEntity<E>;
  if (repository.manager.connection.options.type !== 'postgres') {
    return created(await repository.insert(values));
  }
  return repository.manager.transaction(async (manager) => {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [repository.metadata.tablePath]);
    const entity = created(await manager.insert(repository.target, values));
    await inTransaction?.(manager, entity);
    return entity;
  });
}
