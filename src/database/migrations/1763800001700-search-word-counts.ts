import type { MigrationInterface, QueryRunner } from 'typeorm';
import { SqlDialect } from '../sql-dialect.js';

const DOCUMENTS_TABLE = 'package_search_documents';
const FTS_TABLE = 'package_search_fts';

/**
 * SQLite only: each document keeps its word count (`tokens`), bm25's document length, so a search scores
 * the rows it reads from the stored text without counting its words again (fts5-ranking.ts bm25). The
 * documents indexed before have no count: both tables are emptied (`delete-all` empties a contentless
 * FTS5 table), and the Search module indexes every package again at start-up (about 14 s for 100,000).
 * MySQL/MariaDB keep no word count.
 */
export class SearchWordCounts1763800001700 implements MigrationInterface {
  name = 'SearchWordCounts1763800001700';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (SqlDialect.of(queryRunner.connection).mysql) return;
    await queryRunner.query(`INSERT INTO ${FTS_TABLE}(${FTS_TABLE}) VALUES ('delete-all')`);
    await queryRunner.query(`DELETE FROM ${DOCUMENTS_TABLE}`);
    await queryRunner.query(`ALTER TABLE ${DOCUMENTS_TABLE} ADD COLUMN tokens integer NOT NULL DEFAULT 0`);
  }

  /** Migration 1600's documents: emptied again, as the Search module of then indexed them without a count. */
  async down(queryRunner: QueryRunner): Promise<void> {
    if (SqlDialect.of(queryRunner.connection).mysql) return;
    await queryRunner.query(`INSERT INTO ${FTS_TABLE}(${FTS_TABLE}) VALUES ('delete-all')`);
    await queryRunner.query(`DELETE FROM ${DOCUMENTS_TABLE}`);
    await queryRunner.query(`ALTER TABLE ${DOCUMENTS_TABLE} DROP COLUMN tokens`);
  }
}
