import { MigrationInterface, QueryRunner, TableColumn } from 'typeorm';

/**
 * Animals change: each gets a version, 1 for those there already (SQLite and PostgreSQL). The
 * default is dropped again: the service always writes the version, and a default would make
 * TypeORM read every inserted row back for it.
 */
export class AddPetVersions1795824000000 implements MigrationInterface {
  name = 'AddPetVersions1795824000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const added = new TableColumn({ name: 'version', type: 'bigint', isNullable: false, default: '1' });
    await queryRunner.addColumn('pets', added);
    await queryRunner.changeColumn(
      'pets',
      added,
      new TableColumn({ name: 'version', type: 'bigint', isNullable: false }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropColumn('pets', 'version');
  }
}
