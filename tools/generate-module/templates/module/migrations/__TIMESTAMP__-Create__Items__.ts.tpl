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
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('__items_table__');
  }
}
