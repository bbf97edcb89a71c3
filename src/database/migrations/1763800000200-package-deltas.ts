import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/** Deltas between package versions (Diff module). */
export class PackageDeltas1763800000200 implements MigrationInterface {
  name = 'PackageDeltas1763800000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    // Patch figures stay NULL until the delta is ready (the builders' default of 0 would read as a real size).
    const nullable = { isNullable: true, default: undefined };

    await queryRunner.createTable(
      new Table({
        name: 'package_deltas',
        columns: [
          column.id(),
          column.string('package_id', 36),
          column.string('from_version_id', 36),
          column.string('to_version_id', 36),
          column.string('from_version', 100),
          column.string('to_version', 100),
          column.string('status', 10),
          column.nullableString('format', 20),
          column.bigint('patch_size', nullable),
          column.bigint('full_size', nullable),
          column.integer('changed_files', nullable),
          column.integer('added_files', nullable),
          column.integer('deleted_files', nullable),
          column.integer('kept_files', nullable),
          { ...column.boolean('exact_rebuild'), ...nullable },
          column.nullableString('patch_storage_path', 500),
          column.nullableString('patch_checksum', 64),
          column.text('error'),
          column.timestamp('created_at'),
          column.timestamp('updated_at'),
        ],
        indices: [
          // Leads with package_id, so it also serves "every delta of a package" (deletion).
          new TableIndex({
            name: 'uq_package_deltas_pair',
            columnNames: ['package_id', 'from_version_id', 'to_version_id'],
            isUnique: true,
          }),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('package_deltas', true);
  }
}
