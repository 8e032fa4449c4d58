import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { int64AsNumber } from '../common/validation/int64';

export type Row = ObjectLiteral & { id: number };

/** `int64AsNumber`'s reading, without TypeORM's walk through the column's type on the way. */
const asNumber = (value: unknown) => (value === null || typeof value === 'number' ? value : Number(value));

/** Types whose values the drivers hand over as they are stored, with nothing to convert. */
const AS_STORED = new Set<unknown>(['integer', 'int', 'int4', 'varchar', 'text', 'character varying']);

/** Column types a parameter can be cast to by name (`?::bigint`). */
const PLAIN_TYPES = new Set(['character varying', 'text', 'bigint', 'integer', 'smallint', 'boolean']);

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
  /** `"col", ...`: every column of the entity, for rows read as arrays (`values`). */
  readonly columnList: string;
  /** Where the id is in such a row. */
  readonly idAt: number;
  private readonly columns: ColumnMetadata[];
  private readonly byProperty: Map<string, ColumnMetadata>;
  private readonly convert: Array<((value: unknown) => unknown) | undefined>;
  private readonly driver: DataSource['driver'];
  private readonly texts = new Map<string, string>();

  constructor(dataSource: DataSource, target: EntityTarget<E>) {
    const metadata = dataSource.getMetadata(target);
    const driver = (this.driver = dataSource.driver);
    this.table = metadata.tablePath;
    this.name = `"${metadata.tableName}"`;
    this.columns = metadata.columns;
    this.byProperty = new Map(this.columns.map((column) => [column.propertyName, column]));
    this.columnList = this.columns.map((column) => `"${column.databaseName}"`).join(', ');
    this.idAt = this.columns.findIndex((column) => column.propertyName === 'id');
    this.convert = this.columns.map((column) =>
      !column.transformer && AS_STORED.has(column.type)
        ? undefined
        : column.transformer === int64AsNumber
          ? asNumber
          : (value: unknown) => driver.prepareHydratedValue(value, column) as unknown,
    );
  }

  /** A row read as the array of `columnList`, as the entity's properties. */
  values(values: readonly unknown[]): E {
    const entity: Record<string, unknown> = {};
    for (let index = 0; index < this.columns.length; index++) {
      const convert = this.convert[index];
      entity[this.columns[index].propertyName] = convert ? convert(values[index]) : values[index];
    }
    return entity as E;
  }

  /** One row by id; `forUpdate`: under its lock (PostgreSQL). */
  byId(forUpdate: boolean): string {
    return this.text(
      `byId ${forUpdate}`,
      () => `SELECT ${this.columnList} FROM ${this.name} WHERE "id" = ?${forUpdate ? ' FOR UPDATE' : ''}`,
    );
  }

  /** PostgreSQL: the rows of an array of ids, under their locks, taken in id order. */
  byIds(): string {
    return this.text(
      'byIds',
      () =>
        `SELECT ${this.columnList} FROM ${this.name} WHERE "id" = ANY(?::bigint[]) ORDER BY "id" FOR UPDATE`,
    );
  }

  /** `INSERT INTO "t" ("a", "b") VALUES (?, ?), ...`: `rows` rows of `properties`. */
  insertValues(properties: readonly string[], rows: number): string {
    return this.text(`insert ${properties.join()} ${rows}`, () => {
      const tuple = `(${properties.map(() => '?').join(', ')})`;
      return `${this.insertInto(properties)} VALUES ${Array.from({ length: rows }, () => tuple).join(', ')}`;
    });
  }

  /** `INSERT INTO "t" ("a", "b")`: the rows follow. */
  insertInto(properties: readonly string[]): string {
    return this.text(
      `into ${properties.join()}`,
      () => `INSERT INTO ${this.name} (${properties.map((name) => this.column(name)).join(', ')})`,
    );
  }

  /**
   * PostgreSQL: `unnest(?::bigint[], ...)`, the rows of `properties` from one array per column, so
   * that a statement's text does not vary with their number; undefined where a column's type is
   * not a plain one.
   */
  unnest(properties: readonly string[], more: readonly string[] = []): string | undefined {
    const text = this.text(`unnest ${properties.join()} ${more.join()}`, () => {
      const types = properties.map((name) => this.driver.normalizeType(this.byProperty.get(name)!));
      if (!types.every((type) => PLAIN_TYPES.has(type))) return '';
      return `unnest(${[...types, ...more].map((type) => `?::${type}[]`).join(', ')})`;
    });
    return text || undefined;
  }

  /** Sets `properties` and the version where the row is still at the version it was read at. */
  compareAndSet(properties: readonly string[]): string {
    return this.text(`update ${properties.join()}`, () => {
      const assignments = properties.map((name) => `${this.column(name)} = ?`).join(', ');
      return `UPDATE ${this.name} SET ${assignments}, "version" = ? WHERE "id" = ? AND "version" = ?`;
    });
  }

  /**
   * PostgreSQL: `compareAndSet` of many rows, its parameters an array each (`unnest`); answers
   * the ids of the rows it changed. Undefined where a column's type is not a plain one.
   */
  compareAndSetAll(properties: readonly string[]): string | undefined {
    const rows = this.unnest(properties, ['bigint', 'bigint', 'bigint']);
    if (rows === undefined) return undefined;
    return this.text(`updateAll ${properties.join()}`, () => {
      const aliases = properties.map((_, index) => `"c${index}"`);
      const assignments = properties.map((name, index) => `${this.column(name)} = "v".${aliases[index]}`);
      return (
        `UPDATE ${this.name} AS "t" SET ${assignments.join(', ')}, "version" = "v"."version" ` +
        `FROM ${rows} AS "v" (${aliases.join(', ')}, "version", "id", "old") ` +
        `WHERE "t"."id" = "v"."id" AND "t"."version" = "v"."old" RETURNING "t"."id"`
      );
    });
  }

  private text(key: string, make: () => string): string {
    let text = this.texts.get(key);
    if (text === undefined) this.texts.set(key, (text = make()));
    return text;
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
