import { Table, TableForeignKey, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** WorkerAuth passkeys: the WebAuthn credentials of platform users (public keys and sign counters). */
export class Passkeys1763800001950 implements MigrationInterface {
  name = 'Passkeys1763800001950';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'platform_passkeys',
        columns: [
          column.id(),
          column.string('user_id', 28),
          column.string('credential_key', 64, column.binary()),
          column.text('credential_id', { isNullable: false }),
          column.text('public_key', { isNullable: false }),
          column.bigint('sign_count'),
          column.string('name', 64),
          column.text('transports', { isNullable: false }),
          column.timestamp('created_at'),
          column.nullableTimestamp('last_used_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_platform_passkeys_credential', columnNames: ['credential_key'], isUnique: true }),
          new TableIndex({ name: 'ix_platform_passkeys_user', columnNames: ['user_id'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'fk_platform_passkeys_user',
            columnNames: ['user_id'],
            referencedTableName: 'platform_users',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('platform_passkeys', true);
  }
}
