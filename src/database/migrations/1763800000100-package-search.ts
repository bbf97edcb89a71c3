import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * The registry's search index (Search module): one row per normalized word, field and
 * package. Terms compare in code point order on both engines (SQLite's default BINARY, MySQL's
 * utf8mb4_bin), so exact and prefix matches give the same answers everywhere. The primary key
 * (term, package_id, field) covers every lookup; field weights are applied in the query. Rows are filled by
 * the Search module at start-up for packages that have none, and kept in step with writes.
 */
export class PackageSearch1763800000100 implements MigrationInterface {
  name = 'PackageSearch1763800000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    const binary = column.binary();

    await queryRunner.createTable(
      new Table({
        name: 'package_search_terms',
        columns: [
          column.string('term', 64, { ...binary, isPrimary: true }),
          column.string('package_id', 36, { isPrimary: true }),
          column.string('field', 1, { ...binary, isPrimary: true }),
        ],
        indices: [new TableIndex({ name: 'ix_package_search_terms_package', columnNames: ['package_id'] })],
      }),
    );
    // Popularity order for an empty query and for autocomplete, without sorting every package.
    await queryRunner.createIndex(
      'packages',
      new TableIndex({ name: 'ix_packages_total_downloads', columnNames: ['total_downloads', 'id'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('packages', 'ix_packages_total_downloads');
    await queryRunner.dropTable('package_search_terms', true);
  }
}
