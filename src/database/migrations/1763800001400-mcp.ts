import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** The MCP transport's API keys (`tb_mcp_…`) and its sessions when no Redis is configured. */
export class Mcp1763800001400 implements MigrationInterface {
  name = 'Mcp1763800001400';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'mcp_api_keys',
        columns: [
          column.id(),
          column.string('name', 100),
          column.string('key_hash', 64),
          column.string('key_prefix', 16),
          column.text('permissions', { isNullable: false }),
          column.timestamp('created_at'),
          column.nullableTimestamp('last_used_at'),
          column.integer('usage_count', { default: 0 }),
        ],
        indices: [
          new TableIndex({ name: 'uq_mcp_api_keys_name', columnNames: ['name'], isUnique: true }),
          // Every authenticated request looks its key up by hash.
          new TableIndex({ name: 'uq_mcp_api_keys_key_hash', columnNames: ['key_hash'], isUnique: true }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'mcp_sessions',
        columns: [
          column.string('id', 64, { isPrimary: true }),
          column.string('key_name', 100),
          column.string('protocol_version', 20),
          column.timestamp('created_at'),
          column.timestamp('last_seen_at'),
        ],
        indices: [new TableIndex({ name: 'ix_mcp_sessions_last_seen', columnNames: ['last_seen_at'] })],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('mcp_sessions', true);
    await queryRunner.dropTable('mcp_api_keys', true);
  }
}
