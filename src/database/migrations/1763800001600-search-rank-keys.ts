import type { MigrationInterface, QueryRunner } from 'typeorm';
import { SqlDialect } from '../sql-dialect.js';

const DOCUMENTS_TABLE = 'package_search_documents';
const FTS_TABLE = 'package_search_fts';
/** In the order of their weights (search-terms.ts COLUMN_WEIGHTS); src/modules/search/engines/search-schema.ts names them too. */
const TEXT_COLUMNS = ['name_words', 'display_words', 'keyword_words', 'description_words'] as const;

/**
 * SQLite only (docs/search.md, "SQLite: reading in rank-key order"): the FTS rowid becomes the
 * document's rank key (visibility class, multiplier descending, doc_id), so a search reads the public
 * matches from the highest multiplier down and stops early. The documents table keeps the text (its
 * four columns joined by tabs): a document changing multiplier moves to a new FTS rowid with it, and the
 * search scores the rows it reads in JS from it. FTS5 stays contentless and tokenizes with `ascii`: the text is already normalized into space-separated words (search-terms.ts),
 * so FTS5's words are exactly the JS words bm25 is computed over. Both tables start empty; the Search
 * module indexes every package at start-up (about 8 s for 100,000). MySQL/MariaDB: the documents are
 * emptied, to be indexed again at start-up with the name's segments among its words.
 */
export class SearchRankKeys1763800001600 implements MigrationInterface {
  name = 'SearchRankKeys1763800001600';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (SqlDialect.of(queryRunner.connection).mysql) {
      // A name's words now include its segments (search-terms.ts nameWords): reindexed at start-up.
      await queryRunner.query(`DELETE FROM ${DOCUMENTS_TABLE}`);
      return;
    }
    await queryRunner.query(`DROP TABLE IF EXISTS ${FTS_TABLE}`);
    await queryRunner.query(`DROP TABLE IF EXISTS ${DOCUMENTS_TABLE}`);
    // rank_key is the FTS rowid and this table's own rowid (a join is one rowid lookup); doc_id is the
    // document's stable number, the key's last 32 bits.
    await queryRunner.query(`CREATE TABLE ${DOCUMENTS_TABLE} (
      rank_key INTEGER PRIMARY KEY,
      doc_id integer NOT NULL,
      package_id varchar(36) NOT NULL,
      name varchar(100) NOT NULL,
      name_lower varchar(100) NOT NULL,
      visibility varchar(10) NOT NULL,
      publisher_id varchar(36) NOT NULL,
      package_type varchar(20) NOT NULL,
      total_downloads bigint NOT NULL,
      verified integer NOT NULL,
      multiplier integer NOT NULL,
      text text NOT NULL)`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_${DOCUMENTS_TABLE}_package ON ${DOCUMENTS_TABLE} (package_id)`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_${DOCUMENTS_TABLE}_doc ON ${DOCUMENTS_TABLE} (doc_id)`);
    await queryRunner.query(
      `CREATE INDEX ix_${DOCUMENTS_TABLE}_name ON ${DOCUMENTS_TABLE} (name_lower, visibility, publisher_id, rank_key)`,
    );
    await queryRunner.query(`CREATE INDEX ix_${DOCUMENTS_TABLE}_publisher ON ${DOCUMENTS_TABLE} (publisher_id)`);
    await queryRunner.query(`CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(${TEXT_COLUMNS.join(', ')},
      content='', contentless_delete=1, tokenize='ascii', prefix='2 3 4 5 6')`);
  }

  /** Back to migration 1500's contentless table keyed by doc_id, empty: that Search module reindexes at start-up. */
  async down(queryRunner: QueryRunner): Promise<void> {
    if (SqlDialect.of(queryRunner.connection).mysql) return;
    await queryRunner.query(`DROP TABLE IF EXISTS ${FTS_TABLE}`);
    await queryRunner.query(`DROP TABLE IF EXISTS ${DOCUMENTS_TABLE}`);
    await queryRunner.query(`CREATE TABLE ${DOCUMENTS_TABLE} (
      doc_id INTEGER PRIMARY KEY,
      package_id varchar(36) NOT NULL,
      name varchar(100) NOT NULL,
      name_lower varchar(100) NOT NULL,
      visibility varchar(10) NOT NULL,
      publisher_id varchar(36) NOT NULL,
      package_type varchar(20) NOT NULL,
      total_downloads bigint NOT NULL,
      verified integer NOT NULL,
      multiplier integer NOT NULL)`);
    await queryRunner.query(`CREATE UNIQUE INDEX uq_${DOCUMENTS_TABLE}_package ON ${DOCUMENTS_TABLE} (package_id)`);
    await queryRunner.query(`CREATE INDEX ix_${DOCUMENTS_TABLE}_name ON ${DOCUMENTS_TABLE} (name_lower)`);
    await queryRunner.query(`CREATE INDEX ix_${DOCUMENTS_TABLE}_publisher ON ${DOCUMENTS_TABLE} (publisher_id)`);
    await queryRunner.query(`CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(${TEXT_COLUMNS.join(', ')},
      content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')`);
  }
}
