import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

export class CreateIdempotencyKeys1763949600000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1763949600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'idempotency_keys',
        columns: [
          idColumn(queryRunner),
          { name: 'owner', type: 'varchar', length: '64', isNullable: false },
          { name: 'idempotency_key', type: 'varchar', length: '255', isNullable: false },
          { name: 'request_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'state', type: 'varchar', length: '16', isNullable: false },
          { name: 'status_code', type: 'integer', isNullable: true },
          { name: 'response_body', type: 'text', isNullable: true },
          { name: 'location', type: 'varchar', length: '255', isNullable: true },
          { name: 'created_at', type: 'bigint', isNullable: false },
          { name: 'expires_at', type: 'bigint', isNullable: false },
        ],
        indices: [
          { name: 'uq_idempotency_owner_key', columnNames: ['owner', 'idempotency_key'], isUnique: true },
          { name: 'idx_idempotency_expires_at', columnNames: ['expires_at'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('idempotency_keys');
  }
}
