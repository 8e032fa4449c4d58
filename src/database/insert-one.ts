import { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

/** Work that must commit together with a new row: how an idempotent create stores its answer. */
export type WithCreated<E> = (manager: EntityManager, created: E) => Promise<void>;

/**
 * Inserts one row and returns it with the id the database assigned.
 *
 * On PostgreSQL, `inTransaction` runs inside the transaction that inserts the row: both commit
 * or neither, even when the connection breaks before the commit is confirmed. SQLite offers no
 * transaction of its own (TypeORM shares one connection among all requests, so other requests'
 * statements would join it), so it is not called there; a failed SQLite statement has not
 * committed, so there is no unknown outcome to guard against.
 */
export async function insertOne<E extends ObjectLiteral & { id: number }>(
  repository: Repository<E>,
  row: Omit<E, 'id'>,
  inTransaction?: WithCreated<E>,
): Promise<E> {
  const created = (result: { identifiers: ObjectLiteral[] }) =>
    ({ ...row, id: Number(result.identifiers[0].id) }) as unknown as E;
  const values = row as unknown as QueryDeepPartialEntity<E>;
  if (!inTransaction || repository.manager.connection.options.type !== 'postgres') {
    return created(await repository.insert(values));
  }
  return repository.manager.transaction(async (manager) => {
    const entity = created(await manager.insert(repository.target, values));
    await inTransaction(manager, entity);
    return entity;
  });
}
