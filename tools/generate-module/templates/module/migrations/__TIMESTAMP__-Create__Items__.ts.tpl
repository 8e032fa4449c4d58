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
          // @each field
          // @if text
          // @if optional
          { name: '__field_column__', type: 'varchar', length: '__field_max__', isNullable: true },
          // @end
          // @if !optional
          { name: '__field_column__', type: 'varchar', length: '__field_max__', isNullable: false },
          // @end
          // @end
          // @if int64
          // @if optional
          { name: '__field_column__', type: 'bigint', isNullable: true },
          // @end
          // @if !optional
          { name: '__field_column__', type: 'bigint', isNullable: false },
          // @end
          // @end
          // @end
          // @if defaultState
          { name: 'status', type: 'varchar', length: '16', isNullable: false, default: "'__default_state__'" },
          // @end
          // @if !defaultState
          { name: 'status', type: 'varchar', length: '16', isNullable: true },
          // @end
          // @each reference
          { name: '__ref_column__', type: 'bigint', isNullable: false },
          // @end
          { name: 'version', type: 'bigint', isNullable: false },
        ],
        checks: [{ name: 'chk___items_table___status', expression: `"status" IN (__STATES__)` }],
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
        // @end
        indices: [
          { name: 'idx___items_table___status_id', columnNames: ['status', 'id'] },
          // @each reference
          { name: '__ref_index__', columnNames: ['__ref_column__'] },
          // @end
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('__items_table__');
  }
}
