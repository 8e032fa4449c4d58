import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

export class CreateAuditEvents1796515200000 implements MigrationInterface {
  name = 'CreateAuditEvents1796515200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'audit_events',
        columns: [
          idColumn(queryRunner),
          { name: 'at', type: 'bigint', isNullable: false },
          { name: 'key_id', type: 'bigint', isNullable: true },
          { name: 'key_name', type: 'varchar', length: '100', isNullable: true },
          { name: 'operation', type: 'varchar', length: '100', isNullable: false },
          { name: 'resource', type: 'varchar', length: '100', isNullable: false },
          { name: 'resource_id', type: 'bigint', isNullable: false },
          { name: 'outcome', type: 'integer', isNullable: false },
          { name: 'request_id', type: 'varchar', length: '128', isNullable: false },
          { name: 'client_address', type: 'varchar', length: '64', isNullable: false },
        ],
        indices: [
          { name: 'idx_audit_events_at', columnNames: ['at'] },
          { name: 'idx_audit_events_key', columnNames: ['key_id', 'id'] },
          { name: 'idx_audit_events_resource', columnNames: ['resource', 'id'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('audit_events');
  }
}
