import { ObjectLiteral, Repository } from 'typeorm';

/**
 * A reader of one row by its `id`, with one SELECT built once from the entity's metadata and
 * hydrated column by column as TypeORM hydrates (types and transformers): the row
 * `repository.findOneBy({ id })` gives, at about half its cost per call, which matters on a hot
 * path such as a cache miss of `getPet`. For entities of plain columns only (no relations,
 * embedded, virtual or unselected columns, soft delete or inheritance, and a primary key `id`):
 * others are refused at the first read.
 */
export function rowById<E extends ObjectLiteral>(
  repository: Repository<E>,
): (id: number) => Promise<E | null> {
  let sql: string | undefined;
  return async (id) => {
    const { driver } = repository.manager.connection;
    const { metadata } = repository;
    // Built at the first read: the metadata exists once the database has been reached.
    sql ??= selectById(repository);
    const rows = await repository.query<Record<string, unknown>[]>(sql, [id]);
    if (rows.length === 0) return null;
    const entity = metadata.create() as E;
    for (const column of metadata.columns) {
      (entity as Record<string, unknown>)[column.propertyName] = driver.prepareHydratedValue(
        rows[0][column.databaseName],
        column,
      );
    }
    return entity;
  };
}

function selectById<E extends ObjectLiteral>(repository: Repository<E>): string {
  const { driver } = repository.manager.connection;
  const { metadata } = repository;
  const primary = metadata.primaryColumns;
  const notPlain =
    metadata.relations.length > 0 ||
    metadata.embeddeds.length > 0 ||
    metadata.deleteDateColumn !== undefined ||
    metadata.discriminatorColumn !== undefined ||
    primary.length !== 1 ||
    primary[0].databaseName !== 'id' ||
    metadata.columns.some((column) => !column.isSelect || column.isVirtual || column.isVirtualProperty);
  if (notPlain) {
    throw new Error(
      `rowById: ${metadata.name} is not an entity of plain columns with an id (it has relations, ` +
        'embedded, virtual or unselected columns, soft delete, inheritance or another key); use findOneBy',
    );
  }
  const columns = metadata.columns.map((column) => driver.escape(column.databaseName)).join(', ');
  const table = metadata.tablePath
    .split('.')
    .map((part) => driver.escape(part))
    .join('.');
  return `SELECT ${columns} FROM ${table} WHERE ${driver.escape('id')} = ${driver.createParameter('id', 0)}`;
}
