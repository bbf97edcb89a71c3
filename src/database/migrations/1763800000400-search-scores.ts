import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { PortableColumns } from '../portable-columns.js';

/**
 * Precomputed ranking data on the search index (Search module). Each term row carries its
 * field weight, the package's popularity boost, their product `score`, and the package's visibility,
 * so the best candidates of a word are read in index order, `(term, visibility, score)`, instead of
 * joining and sorting every package that contains a common word. Existing rows lack these values:
 * they are removed here and rebuilt by the Search module at start-up (it indexes packages without terms).
 */
export class SearchScores1763800000400 implements MigrationInterface {
  name = 'SearchScores1763800000400';

  async up(queryRunner: QueryRunner): Promise<void> {
    const column = new PortableColumns(queryRunner);
    await queryRunner.query('DELETE FROM package_search_terms');
    await queryRunner.addColumns('package_search_terms', [
      new TableColumn(column.integer('weight')),
      new TableColumn(column.integer('boost')),
      new TableColumn(column.integer('score')),
      new TableColumn(column.string('visibility', 10, { default: "'public'" })),
    ]);
    await queryRunner.createIndex(
      'package_search_terms',
      // package_id and field complete the index so candidate reads never touch the table rows.
      new TableIndex({
        name: 'ix_package_search_terms_rank',
        columnNames: ['term', 'visibility', 'score', 'package_id', 'field'],
      }),
    );
    // Per field: the distinct words of a field a prefix expands to (one seek each), and the joined-name range.
    await queryRunner.createIndex(
      'package_search_terms',
      new TableIndex({
        name: 'ix_package_search_terms_field',
        columnNames: ['field', 'term', 'visibility', 'score', 'package_id'],
      }),
    );
    // The most downloaded public names with a common prefix, read by walking this index alone (no row lookups).
    await queryRunner.createIndex(
      'packages',
      new TableIndex({
        name: 'ix_packages_visible_popularity',
        columnNames: ['visibility', 'total_downloads', 'name_lower', 'id'],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('packages', 'ix_packages_visible_popularity');
    await queryRunner.dropIndex('package_search_terms', 'ix_package_search_terms_field');
    await queryRunner.dropIndex('package_search_terms', 'ix_package_search_terms_rank');
    for (const name of ['visibility', 'score', 'boost', 'weight'])
      await queryRunner.dropColumn('package_search_terms', name);
  }
}
