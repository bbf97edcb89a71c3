import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** The gateway's settings and its admin key's hash in the shared database (one row; docs/gateway.md). */
export class GatewaySettings1763800001860 implements MigrationInterface {
  name = 'GatewaySettings1763800001860';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'gateway_settings',
        columns: [
          column.string('id', 32, { isPrimary: true }),
          column.text('settings', { isNullable: false }),
          column.string('admin_key_hash', 64),
          column.string('admin_key_hint', 8),
          column.integer('version', { default: 1 }),
          column.timestamp('updated_at'),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('gateway_settings', true);
  }
}
