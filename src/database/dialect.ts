import { QueryRunner } from 'typeorm';

/** SQLite only allows AUTOINCREMENT on INTEGER (64-bit there); other databases use bigint. */
export function isSqlite(queryRunner: QueryRunner): boolean {
  return ['sqlite', 'better-sqlite3'].includes(queryRunner.connection.driver.options.type);
}
