import { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';

/**
 * Keys get scopes, an expiry and a rotation's previous secret. Keys made before keep every scope
 * (`*`); the default is dropped again so that no key is ever given every scope by omission.
 */
export class AddApiKeyScopes1796428800000 implements MigrationInterface {
  name = 'AddApiKeyScopes1796428800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const scopes = { name: 'scopes', type: 'varchar', length: '2000', isNullable: false };
    await queryRunner.addColumns('api_keys', [
      new TableColumn({ ...scopes, default: "'*'" }),
      new TableColumn({ name: 'expires_at', type: 'bigint', isNullable: true }),
      new TableColumn({ name: 'previous_key_hash', type: 'varchar', length: '64', isNullable: true }),
      new TableColumn({ name: 'previous_expires_at', type: 'bigint', isNullable: true }),
    ]);
    await queryRunner.changeColumn('api_keys', 'scopes', new TableColumn(scopes));
    await queryRunner.createIndex(
      'api_keys',
      new TableIndex({
        name: 'uq_api_keys_previous_key_hash',
        columnNames: ['previous_key_hash'],
        isUnique: true,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('api_keys', 'uq_api_keys_previous_key_hash');
    for (const column of ['previous_expires_at', 'previous_key_hash', 'expires_at', 'scopes'])
      await queryRunner.dropColumn('api_keys', column);
  }
}
