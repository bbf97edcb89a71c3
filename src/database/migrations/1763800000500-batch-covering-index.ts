import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Covering indexes for the batch latest-version check (Search module). A 1,000-name check
 * otherwise reads 1,000 package rows and 1,000 version rows scattered over the tables; on a cold
 * MariaDB buffer pool each is a page read. With these, both sides are answered from the indexes alone.
 */
export class BatchCoveringIndex1763800000500 implements MigrationInterface {
  name = 'BatchCoveringIndex1763800000500';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex(
      'packages',
      // id is listed for SQLite, whose secondary indexes carry the rowid rather than the primary key.
      new TableIndex({
        name: 'ix_packages_name_latest',
        columnNames: ['name_lower', 'visibility', 'publisher_id', 'latest_version', 'id'],
      }),
    );
    await queryRunner.createIndex(
      'package_versions',
      // Whether the latest version is yanked, read without visiting the version row (changelog, dependencies).
      new TableIndex({ name: 'ix_package_versions_yanked', columnNames: ['package_id', 'version', 'yanked'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('package_versions', 'ix_package_versions_yanked');
    await queryRunner.dropIndex('packages', 'ix_packages_name_latest');
  }
}
