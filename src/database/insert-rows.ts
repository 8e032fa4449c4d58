import { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import { plainSelect } from './plain-select';

/** The columns an insert writes (all but the generated `id`), and how the table is named. */
interface InsertShape {
  prefix: string;
  columns: { propertyName: string; prepare: (value: unknown) => unknown }[];
  returning: string;
  postgres: boolean;
  parameter: (index: number) => string;
}

/**
 * An inserter of rows, one INSERT per call, with the statement's text made from the entity's
 * metadata once (the placeholders per call) and each value prepared by the driver as TypeORM
 * prepares it (transformers, types): what `repository.insert(rows)` does, without the query
 * builder (about 5 % of a create's CPU; docs/performance.md, step 21). Gives the
 * new entities with the ids the database assigned, in the order of `rows`: on PostgreSQL from
 * `RETURNING`, on SQLite counted back from the last one (a multi-row INSERT takes consecutive
 * ids there; TypeORM counts them the same way).
 *
 * For entities of plain columns (see `plainSelect`) whose only generated column is `id`; a row
 * that leaves a column undefined (for its default) goes through `insert`, as do other entities.
 * `manager` runs it inside a transaction.
 */
export function rowsInserter<E extends ObjectLiteral & { id: number }>(
  repository: Repository<E>,
): (rows: Omit<E, 'id'>[], manager?: EntityManager) => Promise<E[]> {
  let shape: InsertShape | null | undefined;
  return async (rows, manager = repository.manager) => {
    if (shape === undefined) shape = insertShape(repository);
    const own = shape;
    if (
      !own ||
      rows.length === 0 ||
      rows.some((row) => own.columns.some((c) => row[c.propertyName] === undefined))
    ) {
      const result = await manager.insert(repository.target, rows as never);
      return rows.map((row, index) => ({ id: Number(result.identifiers[index].id), ...row }) as unknown as E);
    }
    const { prefix, columns, returning, postgres, parameter } = own;
    const parameters: unknown[] = [];
    const groups: string[] = [];
    for (const row of rows) {
      const placeholders: string[] = [];
      for (const column of columns) {
        parameters.push(column.prepare(row[column.propertyName]));
        placeholders.push(parameter(parameters.length - 1));
      }
      groups.push(`(${placeholders.join(', ')})`);
    }
    const result = await manager.query<unknown>(`${prefix}${groups.join(', ')}${returning}`, parameters);
    const ids = postgres
      ? (result as { id: unknown }[]).map((row) => Number(row.id))
      : rows.map((_, index) => Number(result) - rows.length + 1 + index);
    return rows.map((row, index) => ({ id: ids[index], ...row }) as unknown as E);
  };
}

function insertShape<E extends ObjectLiteral>(repository: Repository<E>): InsertShape | null {
  const plain = plainSelect(repository);
  const { metadata } = repository;
  const { driver } = repository.manager.connection;
  const written = metadata.columns.filter((column) => column.databaseName !== 'id');
  const special = written.some(
    (column) => column.isGenerated || column.isCreateDate || column.isUpdateDate || column.isVersion,
  );
  const type = driver.options.type;
  if (!plain || special || (type !== 'sqlite' && type !== 'postgres')) return null;
  const names = written.map((column) => plain.escape(column.databaseName)).join(', ');
  return {
    prefix: `INSERT INTO ${plain.table} (${names}) VALUES `,
    columns: written.map((column) => ({
      propertyName: column.propertyName,
      prepare: (value): unknown => driver.preparePersistentValue(value, column) as unknown,
    })),
    returning: type === 'postgres' ? ` RETURNING ${plain.escape('id')}` : '',
    postgres: type === 'postgres',
    parameter: (index) => plain.parameter(index),
  };
}
