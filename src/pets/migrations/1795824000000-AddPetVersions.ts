import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/** Animals change: each gets a version, 1 for those there already (SQLite and PostgreSQL). */
export class AddPetVersions1795824000000 implements MigrationInterface {
  name = 'AddPetVersions1795824000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumn(
      'pets',
      new TableColumn({ name: 'version', type: 'bigint', isNullable: false, default: '1' }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('pets', 'version');
  }
}
