import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * A generic `api_keys` table the auth module once offered to the MCP transport and the model gateway. Neither
 * used it (each keeps its own keys: `mcp_api_keys`, `gateway_api_keys`), so DropApiKeys1763800001880 removes it
 * again; this migration stays so databases that ran it keep a consistent history.
 */
export class ApiKeys1763800000800 implements MigrationInterface {
  name = 'ApiKeys1763800000800';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'api_keys',
        columns: [
          column.id(),
          column.string('owner', 191),
          column.string('name', 100),
          column.string('key_hash', 64),
          column.string('key_prefix', 16),
          column.text('permissions', { isNullable: false }),
          column.integer('level', { default: 1 }),
          column.timestamp('created_at'),
          column.nullableTimestamp('last_used_at'),
          column.nullableTimestamp('revoked_at'),
        ],
        indices: [
          // Every authenticated request looks its key up by hash.
          new TableIndex({ name: 'uq_api_keys_key_hash', columnNames: ['key_hash'], isUnique: true }),
          new TableIndex({ name: 'ix_api_keys_owner_name', columnNames: ['owner', 'name'] }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('api_keys', true);
  }
}
