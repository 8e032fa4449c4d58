import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { idColumn } from '../../database/dialect';

export class CreateEvents1796601600000 implements MigrationInterface {
  name = 'CreateEvents1796601600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const id = idColumn(queryRunner);
    const time = (name: string, isNullable = false) => ({ name, type: 'bigint', isNullable });
    await queryRunner.createTable(
      new Table({
        name: 'events',
        columns: [
          id,
          { name: 'type', type: 'varchar', length: '100', isNullable: false },
          time('at'),
          { name: 'data', type: 'text', isNullable: false },
        ],
        // No index on `at`: every event writes each index, and ids already run in time order.
        indices: [{ name: 'idx_events_type', columnNames: ['type', 'id'] }],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_endpoints',
        columns: [
          id,
          { name: 'url', type: 'varchar', length: '2048', isNullable: false },
          { name: 'description', type: 'varchar', length: '500', isNullable: true },
          { name: 'event_types', type: 'varchar', length: '2000', isNullable: false },
          { name: 'enabled', type: 'boolean', isNullable: false },
          { name: 'disabled_reason', type: 'varchar', length: '200', isNullable: true },
          { name: 'secret', type: 'varchar', length: '100', isNullable: false },
          { name: 'previous_secret', type: 'varchar', length: '100', isNullable: true },
          time('previous_secret_expires_at', true),
          time('created_at'),
          { name: 'version', type: 'bigint', isNullable: false },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          id,
          { name: 'endpoint_id', type: 'bigint', isNullable: false },
          { name: 'event_id', type: 'bigint', isNullable: false },
          { name: 'event_type', type: 'varchar', length: '100', isNullable: false },
          { name: 'status', type: 'varchar', length: '16', isNullable: false },
          { name: 'tries', type: 'integer', isNullable: false },
          time('next_attempt_at'),
          time('created_at'),
          time('delivered_at', true),
          { name: 'attempts', type: 'text', isNullable: false },
        ],
        foreignKeys: [
          {
            name: 'fk_webhook_deliveries_endpoint',
            columnNames: ['endpoint_id'],
            referencedTableName: 'webhook_endpoints',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
        indices: [
          { name: 'idx_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] },
          { name: 'idx_webhook_deliveries_endpoint', columnNames: ['endpoint_id', 'id'] },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'outbox_positions',
        columns: [
          { name: 'name', type: 'varchar', length: '32', isPrimary: true },
          { name: 'position', type: 'bigint', isNullable: false },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['outbox_positions', 'webhook_deliveries', 'webhook_endpoints', 'events'])
      await queryRunner.dropTable(table);
  }
}
