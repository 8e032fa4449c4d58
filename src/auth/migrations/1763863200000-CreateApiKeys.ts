import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

export class CreateApiKeys1763863200000 implements MigrationInterface {
  name = 'CreateApiKeys1763863200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          idColumn(queryRunner),
          { name: 'name', type: 'varchar', length: '100', isNullable: false },
          { name: 'prefix', type: 'varchar', length: '16', isNullable: false },
          { name: 'key_hash', type: 'varchar', length: '64', isNullable: false },
          { name: 'created_at', type: 'bigint', isNullable: false },
          { name: 'last_used_at', type: 'bigint', isNullable: true },
          { name: 'revoked_at', type: 'bigint', isNullable: true },
        ],
        indices: [
          { name: 'uq_api_keys_key_hash', columnNames: ['key_hash'], isUnique: true },
          { name: 'idx_api_keys_prefix', columnNames: ['prefix'] },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_keys');
  }
}
