import type { DataSource, EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

export type Row = ObjectLiteral & { id: number };

/** Types whose values the drivers hand over as they are stored, with nothing to convert. */
const AS_STORED = new Set<unknown>(['integer', 'int', 'int4', 'varchar', 'text', 'character varying']);

/**
 * An entity's table as plain SQL sees it: a statement's columns and values, and its rows as the
 * entity's properties, converted as TypeORM converts them (transformers, booleans), but without
 * its query building and hydration, which were most of an uncached read's CPU.
 */
export class RowShape<E extends ObjectLiteral = Row> {
  /** As caches key it (with its schema). */
  readonly table: string;
  /** As statements name it (the search path finds its schema). */
  readonly name: string;
  /** `"col" AS "property", ...`: every column of the entity. */
  readonly select: string;
  private readonly columns: ColumnMetadata[];
  private readonly byProperty: Map<string, ColumnMetadata>;
  private readonly convert: Array<((value: unknown) => unknown) | undefined>;
  private readonly driver: DataSource['driver'];

  constructor(dataSource: DataSource, target: EntityTarget<E>) {
    const metadata = dataSource.getMetadata(target);
    const driver = (this.driver = dataSource.driver);
    this.table = metadata.tablePath;
    this.name = `"${metadata.tableName}"`;
    this.columns = metadata.columns;
    this.byProperty = new Map(this.columns.map((column) => [column.propertyName, column]));
    this.select = this.columns
      .map((column) => `"${column.databaseName}" AS "${column.propertyName}"`)
      .join(', ');
    this.convert = this.columns.map((column) =>
      !column.transformer && AS_STORED.has(column.type)
        ? undefined
        : (value: unknown) => driver.prepareHydratedValue(value, column) as unknown,
    );
  }

  /** A row read with `select`, as the entity's properties. */
  entity(raw: Record<string, unknown>): E {
    for (let index = 0; index < this.columns.length; index++) {
      const convert = this.convert[index];
      if (convert) {
        const name = this.columns[index].propertyName;
        raw[name] = convert(raw[name]);
      }
    }
    return raw as E;
  }

  column(property: string): string {
    const column = this.byProperty.get(property);
    if (!column) throw new Error(`${this.table} has no column for ${property}`);
    return `"${column.databaseName}"`;
  }

  /** A property's value as its column stores it. */
  stored(property: string, value: unknown): unknown {
    return this.driver.preparePersistentValue(value, this.byProperty.get(property)!);
  }
}

/** One plain multi-row INSERT of rows never read back: the insert builder was a tenth of a create's CPU. */
export async function insertRows(
  manager: EntityManager,
  target: EntityTarget<ObjectLiteral>,
  rows: readonly ObjectLiteral[],
): Promise<void> {
  const metadata = manager.connection.getMetadata(target);
  const columns = Object.keys(rows[0]).map((key) => metadata.findColumnWithPropertyName(key)!);
  const names = columns.map((column) => `"${column.databaseName}"`).join(', ');
  const { driver } = manager.connection;
  for (let start = 0; start < rows.length; start += 100) {
    const chunk = rows.slice(start, start + 100);
    let n = 0;
    const tuples = chunk.map(() => `(${columns.map(() => driver.createParameter('', n++)).join(', ')})`);
    const values = chunk.flatMap((row): unknown[] =>
      columns.map((column): unknown => driver.preparePersistentValue(row[column.propertyName], column)),
    );
    await manager.query(`INSERT INTO "${metadata.tableName}" (${names}) VALUES ${tuples.join(', ')}`, values);
  }
}
