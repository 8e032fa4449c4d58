import { DataSource, PrimaryGeneratedColumn, QueryRunner, TableColumnOptions } from 'typeorm';

const SQLITE_TYPES: readonly string[] = ['sqlite', 'better-sqlite3'];

/** SQLite only allows AUTOINCREMENT on INTEGER (64-bit there); other databases use bigint. */
export function idColumn(queryRunner: QueryRunner): TableColumnOptions {
  return {
    name: 'id',
    type: SQLITE_TYPES.includes(queryRunner.connection.driver.options.type) ? 'integer' : 'bigint',
    isPrimary: true,
    isGenerated: true,
    generationStrategy: 'increment',
  };
}

/** The entity side of `idColumn`: `int8`, as TypeORM hands generated `bigint` keys back as strings. */
export function IdColumn(): PropertyDecorator {
  return PrimaryGeneratedColumn('increment', { type: 'int8' });
}

/** The DataSource every part of the service opens: on SQLite, generated `int8` keys become `integer`. */
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

/** A statement refused because a foreign key would break (PostgreSQL 23503, SQLite's constraint error). */
export function isForeignKeyViolation(error: unknown): boolean {
  const { driverError } = (error ?? {}) as { driverError?: { code?: unknown; message?: unknown } };
  const cause = driverError ?? (error as { code?: unknown; message?: unknown } | undefined);
  if (cause?.code === '23503') return true;
  // ON DELETE RESTRICT answers SQLITE_CONSTRAINT_TRIGGER, a missing parent SQLITE_CONSTRAINT_FOREIGNKEY.
  return (
    String(cause?.code).startsWith('SQLITE_CONSTRAINT') && String(cause?.message).includes('FOREIGN KEY')
  );
}
