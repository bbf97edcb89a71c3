import { Table, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * The distinct words of the search index's text fields (Search module): a query prefix is
 * expanded to the words it stands for with one index range read here, instead of one seek per word
 * into `package_search_terms`. Binary order on both engines, as the index itself. Filled here from
 * the existing index and kept in step by the Search module; a word whose last package is gone stays
 * (it expands to nothing).
 */
export class SearchVocabulary1763800000600 implements MigrationInterface {
  name = 'SearchVocabulary1763800000600';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    const binary = column.binary();
    await queryRunner.createTable(
      new Table({
        name: 'package_search_vocabulary',
        columns: [column.string('term', 64, { ...binary, isPrimary: true })],
      }),
    );
    // The text fields (search-terms.ts SEARCH_FIELDS): name words, display name, keywords, description.
    await queryRunner.query(
      `INSERT INTO package_search_vocabulary (term) SELECT DISTINCT term FROM package_search_terms WHERE field IN ('t', 'd', 'k', 's')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('package_search_vocabulary', true);
  }
}
