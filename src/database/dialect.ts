import { DataSource, PrimaryGeneratedColumn, QueryRunner, TableColumnOptions } from 'typeorm';

const SQLITE_TYPES: readonly string[] = ['sqlite', 'better-sqlite3'];

/** SQLite only allows AUTOINCREMENT on INTEGER (64-bit there); other databases use bigint. */
export function isSqlite(queryRunner: QueryRunner): boolean {
  return SQLITE_TYPES.includes(queryRunner.connection.driver.options.type);
}

/** The `id` primary key every table has: assigned by the database, only growing, never reused. */
export function idColumn(queryRunner: QueryRunner): TableColumnOptions {
  return {
    name: 'id',
    type: isSqlite(queryRunner) ? 'integer' : 'bigint',
    isPrimary: true,
    isGenerated: true,
    generationStrategy: 'increment',
  };
}

/**
 * The entity side of `idColumn`: a 64-bit integer the database assigns. Declared `int8`, which
 * PostgreSQL calls `bigint`: TypeORM hands generated keys declared `bigint` back as strings,
 * while ids here are numbers (they stay below 2^53, and int8 is parsed as a number).
 * `AppDataSource` declares it `integer` on SQLite, so the entities describe exactly what the
 * migrations create on either database.
 */
export function IdColumn(): PropertyDecorator {
  return PrimaryGeneratedColumn('increment', { type: 'int8' });
}

/**
 * The DataSource every part of the service opens: the app, the key CLI, the TypeORM CLI and
 * the migration check. SQLite accepts AUTOINCREMENT only on an INTEGER PRIMARY KEY, so there
 * the auto-increment `int8` keys of the entities become `integer` (also 64-bit in SQLite),
 * as `idColumn` creates them. Without this, comparing entities with the migrated schema
 * would report a difference on one of the two databases.
 */
export class AppDataSource extends DataSource {
  protected override async buildMetadatas(): Promise<void> {
    await super.buildMetadatas();
    if (!SQLITE_TYPES.includes(this.options.type)) return;
    for (const column of this.entityMetadatas.flatMap((entity) => entity.columns)) {
      if (column.isPrimary && column.generationStrategy === 'increment' && column.type === 'int8') {
        column.type = 'integer';
      }
    }
  }
}
