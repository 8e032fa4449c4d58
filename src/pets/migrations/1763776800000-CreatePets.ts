import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

/** The pets table. Ids come from AUTOINCREMENT so they only grow and are never reused. */
export class CreatePets1763776800000 implements MigrationInterface {
  name = 'CreatePets1763776800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'pets',
        columns: [
          idColumn(queryRunner),
          { name: 'name', type: 'varchar', length: '255', isNullable: false },
          { name: 'category_id', type: 'bigint', isNullable: false },
          { name: 'status', type: 'varchar', length: '16', isNullable: true },
        ],
        checks: [{ name: 'chk_pets_status', expression: `"status" IN ('available', 'pending', 'sold')` }],
        indices: [{ name: 'idx_pets_status_id', columnNames: ['status', 'id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('pets');
  }
}
