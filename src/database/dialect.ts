import { QueryRunner, TableColumnOptions } from 'typeorm';

/** SQLite only allows AUTOINCREMENT on INTEGER (64-bit there); other databases use bigint. */
export function isSqlite(queryRunner: QueryRunner): boolean {
  return ['sqlite', 'better-sqlite3'].includes(queryRunner.connection.driver.options.type);
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
