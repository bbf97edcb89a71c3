import { Table, TableForeignKey, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * WorkerAuth: the platform's users and their linked provider identities, and the shared store
 * of short-lived auth state (revocations, OAuth states, magic-link tokens) used when Redis is not configured.
 */
export class WorkerAuth1763800001200 implements MigrationInterface {
  name = 'WorkerAuth1763800001200';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'auth_store_entries',
        columns: [
          column.string('entry_key', 191, { isPrimary: true, ...column.binary() }),
          column.text('value', { isNullable: false }),
          column.timestamp('expires_at'),
        ],
        indices: [new TableIndex({ name: 'ix_auth_store_entries_expires_at', columnNames: ['expires_at'] })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'platform_users',
        columns: [
          column.string('id', 28, { isPrimary: true }),
          column.string('username', 191),
          column.string('email', 320),
          // Lower-cased e-mail: the unique index makes e-mails unique regardless of case on both engines.
          column.string('email_key', 191, column.binary()),
          column.integer('level', { default: 1 }),
          column.timestamp('created_at'),
          column.nullableTimestamp('last_login_at'),
        ],
        indices: [new TableIndex({ name: 'uq_platform_users_email_key', columnNames: ['email_key'], isUnique: true })],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'platform_user_identities',
        columns: [
          column.id(),
          column.string('user_id', 28),
          column.string('provider', 32),
          column.string('provider_user_id', 191, column.binary()),
          column.nullableString('email', 320),
          column.timestamp('created_at'),
          column.nullableTimestamp('last_login_at'),
        ],
        indices: [
          new TableIndex({
            name: 'uq_platform_user_identities_provider',
            columnNames: ['provider', 'provider_user_id'],
            isUnique: true,
          }),
          new TableIndex({ name: 'ix_platform_user_identities_user', columnNames: ['user_id'] }),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: 'fk_platform_user_identities_user',
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
    await queryRunner.dropTable('platform_user_identities', true);
    await queryRunner.dropTable('platform_users', true);
    await queryRunner.dropTable('auth_store_entries', true);
  }
}
