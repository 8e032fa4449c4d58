import { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';

/** Changes made with an identity provider's access token name its subject and client. */
export class AddAuditSubjects1796688000000 implements MigrationInterface {
  name = 'AddAuditSubjects1796688000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.addColumns('audit_events', [
      new TableColumn({ name: 'subject', type: 'varchar', length: '255', isNullable: true }),
      new TableColumn({ name: 'client_id', type: 'varchar', length: '255', isNullable: true }),
    ]);
    await queryRunner.createIndex(
      'audit_events',
      new TableIndex({
        name: 'idx_audit_events_subject',
        columnNames: ['subject', 'id'],
        where: 'subject IS NOT NULL',
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('audit_events', 'idx_audit_events_subject');
    await queryRunner.dropColumns('audit_events', ['client_id', 'subject']);
  }
}
