import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

export class InitialRegistry1763800000000 implements MigrationInterface {
  name = 'InitialRegistry1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);

    await queryRunner.createTable(
      new Table({
        name: 'queue_jobs',
        columns: [
          column.id(),
          column.string('name', 100),
          column.nullableString('dedupe_key', 191),
          column.text('payload', { isNullable: false }),
          column.string('state', 12),
          column.integer('attempts'),
          column.integer('max_attempts'),
          column.integer('backoff_ms'),
          column.timestamp('run_at'),
          column.nullableTimestamp('locked_until'),
          column.text('last_error'),
          column.timestamp('created_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_queue_jobs_dedupe_key', columnNames: ['dedupe_key'], isUnique: true }),
          new TableIndex({ name: 'ix_queue_jobs_state_run_at', columnNames: ['state', 'run_at'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'users',
        columns: [
          column.id(),
          column.string('platform_user_id', 191),
          column.string('username', 191),
          column.nullableString('email', 320),
          column.boolean('is_admin'),
          column.timestamp('created_at'),
          column.timestamp('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_users_platform_user_id', columnNames: ['platform_user_id'], isUnique: true }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'publishers',
        columns: [
          column.id(),
          column.string('name', 100),
          column.string('name_lower', 100),
          column.string('display_name', 200),
          column.nullableString('email', 320),
          column.nullableString('homepage', 500),
          column.string('verification_status', 20),
          column.string('owner_user_id', 36),
          column.timestamp('created_at'),
          column.timestamp('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_publishers_name_lower', columnNames: ['name_lower'], isUnique: true }),
          new TableIndex({ name: 'uq_publishers_owner_user_id', columnNames: ['owner_user_id'], isUnique: true }),
          new TableIndex({ name: 'ix_publishers_status', columnNames: ['verification_status'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'packages',
        columns: [
          column.id(),
          column.string('name', 100),
          column.string('name_lower', 100),
          column.string('display_name', 200),
          column.text('description'),
          column.string('package_type', 20),
          column.string('visibility', 10),
          column.nullableString('homepage', 500),
          column.nullableString('repository', 500),
          column.nullableString('license', 100),
          column.text('keywords'),
          column.text('readme'),
          column.string('publisher_id', 36),
          column.nullableString('latest_version', 100),
          column.bigint('total_downloads'),
          column.timestamp('created_at'),
          column.timestamp('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_packages_name_lower', columnNames: ['name_lower'], isUnique: true }),
          new TableIndex({ name: 'ix_packages_publisher', columnNames: ['publisher_id'] }),
          new TableIndex({ name: 'ix_packages_visibility_updated', columnNames: ['visibility', 'updated_at'] }),
          new TableIndex({ name: 'ix_packages_updated', columnNames: ['updated_at'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'package_versions',
        columns: [
          column.id(),
          column.string('package_id', 36),
          column.string('version', 100),
          column.text('changelog'),
          column.nullableString('toolbox_version', 200),
          column.text('dependencies'),
          column.bigint('size_bytes'),
          column.string('checksum_sha256', 64),
          column.string('storage_key', 500),
          column.boolean('yanked'),
          column.text('yank_reason'),
          column.bigint('downloads'),
          column.timestamp('published_at'),
        ],
        indices: [
          new TableIndex({
            name: 'uq_package_versions_package_version',
            columnNames: ['package_id', 'version'],
            isUnique: true,
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['package_versions', 'packages', 'publishers', 'users', 'queue_jobs']) {
      await queryRunner.dropTable(table, true);
    }
  }
}
