import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

/** The __items_table__ table (SQLite and PostgreSQL). Ids only grow and are never reused. */
export class Create__Items____TIMESTAMP__ implements MigrationInterface {
  name = 'Create__Items____TIMESTAMP__';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: '__items_table__',
        columns: [
          idColumn(queryRunner),
          { name: 'name', type: 'varchar', length: '255', isNullable: false },
          { name: 'description', type: 'varchar', length: '1000', isNullable: true },
          { name: 'status', type: 'varchar', length: '16', isNullable: false, default: "'active'" },
          // @each reference
          { name: '__ref_column__', type: 'bigint', isNullable: false },
          // @end
          // @if mutable
          { name: 'version', type: 'integer', isNullable: false },
          // @end
        ],
        checks: [{ name: 'chk___items_table___status', expression: `"status" IN ('active', 'archived')` }],
        // @if references
        foreignKeys: [
          // @each reference
          {
            name: '__ref_fk__',
            columnNames: ['__ref_column__'],
            referencedTableName: '__ref_table__',
            referencedColumnNames: ['id'],
            onDelete: 'RESTRICT',
          },
          // @end
        ],
        indices: [
          // @each reference
          { name: '__ref_index__', columnNames: ['__ref_column__'] },
          // @end
        ],
        // @end
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('__items_table__');
  }
}
