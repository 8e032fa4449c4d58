import { ObjectLiteral, Repository } from 'typeorm';
import { PlainSelect, plainSelect } from './plain-select';

/**
 * A reader of one row by its `id`, with one SELECT built once from the entity's metadata and
 * hydrated column by column as TypeORM hydrates (types and transformers): the row
 * `repository.findOneBy({ id })` gives, at about half its cost per call, which matters on a hot
 * path such as a cache miss of `getPet`. For entities of plain columns only (see `plainSelect`):
 * others are refused at the first read.
 */
export function rowById<E extends ObjectLiteral>(
  repository: Repository<E>,
): (id: number) => Promise<E | null> {
  let select: { sql: string; plain: PlainSelect<E> } | undefined;
  return async (id) => {
    // Built at the first read: the metadata exists once the database has been reached.
    select ??= selectById(repository);
    const rows = await repository.query<Record<string, unknown>[]>(select.sql, [id]);
    return rows.length === 0 ? null : select.plain.hydrate(rows[0]);
  };
}

function selectById<E extends ObjectLiteral>(
  repository: Repository<E>,
): { sql: string; plain: PlainSelect<E> } {
  const plain = plainSelect(repository);
  if (!plain) {
    throw new Error(
      `rowById: ${repository.metadata.name} is not an entity of plain columns with an id (it has relations, ` +
        'embedded, virtual or unselected columns, soft delete, inheritance, another key, listeners or ' +
        'subscribers); use findOneBy',
    );
  }
  return { sql: `${plain.selectFrom} WHERE ${plain.escape('id')} = ${plain.parameter(0)}`, plain };
}
