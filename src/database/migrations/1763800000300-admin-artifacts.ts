import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** Publisher verification requests and the audit log (Admin module), artifacts and their builds (Artifacts module). */
export class AdminArtifacts1763800000300 implements MigrationInterface {
  name = 'AdminArtifacts1763800000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);

    await queryRunner.createTable(
      new Table({
        name: 'publisher_verification_requests',
        columns: [
          column.id(),
          column.string('publisher_id', 36),
          column.string('method', 20),
          column.text('data', { isNullable: false }),
          column.string('submitted_by_user_id', 36),
          column.timestamp('submitted_at'),
          column.nullableString('reviewer_user_id', 36),
          column.nullableString('reviewer', 191),
          column.nullableString('decision', 20),
          column.text('notes'),
          column.nullableTimestamp('reviewed_at'),
        ],
        indices: [
          new TableIndex({ name: 'ix_verification_requests_publisher', columnNames: ['publisher_id', 'submitted_at'] }),
          // The pending list: open requests (decision IS NULL), oldest first.
          new TableIndex({ name: 'ix_verification_requests_open', columnNames: ['decision', 'submitted_at'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'audit_log',
        columns: [
          column.id(),
          column.nullableString('actor_user_id', 36),
          column.string('actor', 191),
          column.string('action', 50),
          column.string('target_type', 20),
          column.string('target', 100),
          column.string('target_lower', 100),
          column.string('target_id', 36),
          column.text('notes'),
          column.timestamp('created_at'),
        ],
        indices: [
          new TableIndex({ name: 'ix_audit_log_created', columnNames: ['created_at'] }),
          new TableIndex({ name: 'ix_audit_log_target_lower', columnNames: ['target_lower', 'created_at'] }),
          new TableIndex({ name: 'ix_audit_log_target_id', columnNames: ['target_id', 'created_at'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'artifacts',
        columns: [
          column.id(),
          column.string('name', 100),
          column.string('name_lower', 100),
          column.string('artifact_type', 30),
          column.text('description'),
          column.nullableString('homepage', 500),
          column.nullableString('repository', 500),
          column.string('publisher_id', 36),
          column.nullableString('latest_version', 100),
          column.bigint('total_downloads'),
          column.timestamp('created_at'),
          column.timestamp('updated_at'),
        ],
        indices: [
          new TableIndex({ name: 'uq_artifacts_name_lower', columnNames: ['name_lower'], isUnique: true }),
          new TableIndex({ name: 'ix_artifacts_publisher', columnNames: ['publisher_id'] }),
          new TableIndex({ name: 'ix_artifacts_type_updated', columnNames: ['artifact_type', 'updated_at'] }),
          new TableIndex({ name: 'ix_artifacts_updated', columnNames: ['updated_at'] }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'artifact_versions',
        columns: [
          column.id(),
          column.string('artifact_id', 36),
          column.string('version', 100),
          column.text('changelog'),
          column.nullableString('min_os_version', 50),
          column.timestamp('released_at'),
        ],
        indices: [
          new TableIndex({
            name: 'uq_artifact_versions_artifact_version',
            columnNames: ['artifact_id', 'version'],
            isUnique: true,
          }),
        ],
      }),
    );

    await queryRunner.createTable(
      new Table({
        name: 'artifact_builds',
        columns: [
          column.id(),
          column.string('artifact_id', 36),
          column.string('version_id', 36),
          column.string('platform', 10),
          column.string('architecture', 10),
          column.string('filename', 200),
          column.bigint('size_bytes'),
          column.string('checksum_sha256', 64),
          column.nullableString('installer_type', 50),
          column.string('storage_key', 500),
          column.bigint('downloads'),
          column.timestamp('created_at'),
        ],
        indices: [
          // One build per platform and architecture of a version; the database settles racing uploads.
          new TableIndex({
            name: 'uq_artifact_builds_target',
            columnNames: ['version_id', 'platform', 'architecture'],
            isUnique: true,
          }),
          new TableIndex({ name: 'ix_artifact_builds_artifact', columnNames: ['artifact_id'] }),
          new TableIndex({ name: 'ix_artifact_builds_storage_key', columnNames: ['storage_key'] }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'artifact_builds',
      'artifact_versions',
      'artifacts',
      'audit_log',
      'publisher_verification_requests',
    ]) {
      await queryRunner.dropTable(table, true);
    }
  }
}
