import { EntitySubscriberInterface, ObjectLiteral, Repository } from 'typeorm';
import { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/**
 * The parts of a hand-built SELECT over an entity of plain columns, from its metadata: what
 * `rowById`, `findPageAfter` and `rowsInserter` use to read and write rows without TypeORM's
 * query builder, which costs more than the database's work on a hot path. Plain means no
 * relations, embedded, virtual or unselected columns, soft delete or inheritance, a single
 * primary key named `id`, and no entity listeners or subscribers for it (`@AfterLoad`,
 * `@BeforeInsert`, an `EntitySubscriberInterface`): for others TypeORM reads and writes
 * differently (joins, hidden columns, `deleted_at IS NULL`, hooks), so `plainSelect` gives
 * undefined.
 */
export interface PlainSelect<E> {
  /** The table, with its schema, escaped for the database. */
  table: string;
  /** `SELECT <every column> FROM <table>`, escaped for the database. */
  selectFrom: string;
  /** The column of an entity property, if it is one. */
  column(propertyName: string): ColumnMetadata | undefined;
  /** A column name, escaped. */
  escape(name: string): string;
  /** The placeholder of the parameter at `index` (0-based): `?` on SQLite, `$1` on PostgreSQL. */
  parameter(index: number): string;
  /** The entity of a result row, typed and transformed column by column as TypeORM hydrates. */
  hydrate(row: Record<string, unknown>): E;
}

/** The hand-built SELECT of this repository's entity, or undefined if it is not plain. */
export function plainSelect<E extends ObjectLiteral>(repository: Repository<E>): PlainSelect<E> | undefined {
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
    metadata.columns.some((column) => !column.isSelect || column.isVirtual || column.isVirtualProperty) ||
    metadata.listeners.length > 0 ||
    repository.manager.connection.subscribers.some((subscriber) => listensTo(subscriber, metadata.target));
  if (notPlain) return undefined;
  const columns = metadata.columns.map((column) => driver.escape(column.databaseName)).join(', ');
  const table = metadata.tablePath
    .split('.')
    .map((part) => driver.escape(part))
    .join('.');
  return {
    table,
    selectFrom: `SELECT ${columns} FROM ${table}`,
    column: (propertyName) => metadata.findColumnWithPropertyName(propertyName),
    escape: (name) => driver.escape(name),
    parameter: (index) => driver.createParameter(`p${index}`, index),
    hydrate: (row) => {
      // As TypeORM builds a loaded entity: without running its constructor.
      const entity = metadata.create(undefined, { fromDeserializer: true }) as Record<string, unknown>;
      for (const column of metadata.columns) {
        entity[column.propertyName] = driver.prepareHydratedValue(row[column.databaseName], column);
      }
      return entity as E;
    },
  };
}

/** Whether TypeORM would call this subscriber for the entity (as its broadcaster decides). */
function listensTo(subscriber: EntitySubscriberInterface, target: unknown): boolean {
  const listened = subscriber.listenTo?.() as unknown;
  if (!listened || listened === Object || listened === target) return true;
  return (
    typeof listened === 'function' &&
    typeof target === 'function' &&
    Object.prototype.isPrototypeOf.call(listened, target)
  );
}
