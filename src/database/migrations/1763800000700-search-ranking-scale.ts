import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * The search index's stored score becomes the one-word ranking itself (Search module): the
 * popularity boost moves from one step per power of ten of downloads (10…16) to ten (100…160), and
 * the publisher's verification (×1.2) joins it, in a new `verified` column kept in step with admin
 * decisions. The candidates a query reads in stored-score order then follow the ranking closely.
 * A common name prefix is read by walking the packages in download order; verified packages, which
 * may rank above that walk, are read apart from the field index, which gains the flag as its last column.
 * Existing rows are on the old scale: they are removed here and rebuilt by the Search module at
 * start-up, which indexes every package without terms (the vocabulary keeps its words).
 */
export class SearchRankingScale1763800000700 implements MigrationInterface {
  name = 'SearchRankingScale1763800000700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DELETE FROM package_search_terms');
    await queryRunner.addColumn(
      'package_search_terms',
      new TableColumn(new PortableColumns(queryRunner).integer('verified')),
    );
    await queryRunner.dropIndex('package_search_terms', 'ix_package_search_terms_field');
    await queryRunner.createIndex(
      'package_search_terms',
      new TableIndex({
        name: 'ix_package_search_terms_field',
        columnNames: ['field', 'term', 'visibility', 'score', 'package_id', 'verified'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DELETE FROM package_search_terms');
    await queryRunner.dropIndex('package_search_terms', 'ix_package_search_terms_field');
    await queryRunner.createIndex(
      'package_search_terms',
      new TableIndex({
        name: 'ix_package_search_terms_field',
        columnNames: ['field', 'term', 'visibility', 'score', 'package_id'],
      }),
    );
    await queryRunner.dropColumn('package_search_terms', 'verified');
  }
}
