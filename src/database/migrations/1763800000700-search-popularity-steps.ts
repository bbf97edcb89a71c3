import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The search index's stored popularity boost moves from one step per power of ten of downloads
 * (10…16) to ten steps per power of ten (100…160), so that the candidates a query reads in stored-score
 * order follow downloads closely (Search module, issue 4). The rows' boost and score are on the old
 * scale: they are removed here and rebuilt by the Search module at start-up, which indexes every
 * package without terms (the vocabulary keeps its words).
 */
export class SearchPopularitySteps1763800000700 implements MigrationInterface {
  name = 'SearchPopularitySteps1763800000700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DELETE FROM package_search_terms');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The old scale is rebuilt the same way by the code that uses it.
    await queryRunner.query('DELETE FROM package_search_terms');
  }
}
