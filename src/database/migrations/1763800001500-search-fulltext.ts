import { Logger } from '@nestjs/common';
import { Table, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import type { SEARCH_MYSQL_ENGINES } from '../../config/config.js';
import { PortableColumns } from '../portable-columns.js';
import { SqlDialect } from '../sql-dialect.js';

const DOCUMENTS_TABLE = 'package_search_documents';
const FTS_TABLE = 'package_search_fts';
const FULLTEXT_INDEX = 'ft_package_search_documents_text';
/** In the order of their weights (search-terms.ts COLUMN_WEIGHTS); src/modules/search/engines/search-schema.ts names them too. */
const TEXT_COLUMNS = ['name_words', 'display_words', 'keyword_words', 'description_words'] as const;

type MysqlFulltextEngine = 'Mroonga' | 'InnoDB';

type SearchMysqlEngineSetting = (typeof SEARCH_MYSQL_ENGINES)[number];

/**
 * `SEARCH_MYSQL_ENGINE` (the configuration's database.searchMysqlEngine): `auto` (default) uses Mroonga when the
 * server offers it, `innodb` forces InnoDB FULLTEXT (and is how the contract spec tests that variant), `mroonga`
 * requires Mroonga.
 */
async function chooseMysqlFulltextEngine(
  queryRunner: Pick<QueryRunner, 'query'>,
  setting: string,
): Promise<MysqlFulltextEngine> {
  const wanted = setting.trim().toLowerCase() || 'auto';
  if (wanted === 'innodb') return 'InnoDB';
  const rows: Array<{ SUPPORT: string }> = await queryRunner.query(
    `SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'Mroonga'`,
  );
  const available = rows.some((row) => row.SUPPORT === 'YES' || row.SUPPORT === 'DEFAULT');
  if (wanted === 'mroonga' && !available)
    throw new Error('SEARCH_MYSQL_ENGINE=mroonga but the server has no active Mroonga storage engine');
  if (wanted !== 'auto' && wanted !== 'mroonga')
    throw new Error(`SEARCH_MYSQL_ENGINE must be auto, mroonga or innodb (got "${setting}")`);
  return available ? 'Mroonga' : 'InnoDB';
}

async function createSqliteSearchTables(queryRunner: Pick<QueryRunner, 'query'>): Promise<void> {
  // doc_id is the FTS rowid; the attributes ranking and visibility read sit beside it, one join away.
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
  // Contentless: the text lives in `packages`; the index keeps what matching and bm25 need. detail=full
  // (the default) because bm25 was three times slower with detail=column or none on 100,000 packages.
  await queryRunner.query(`CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(${TEXT_COLUMNS.join(', ')},
    content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')`);
}

async function createMysqlSearchTables(
  queryRunner: Pick<QueryRunner, 'query'>,
  engine: MysqlFulltextEngine,
): Promise<void> {
  const text = TEXT_COLUMNS.join(', ');
  // One index over every text column finds the matches; one per column scores them, summed with the
  // column weights (neither engine weighs columns within one MATCH: Mroonga's `*W` section weights do
  // not apply to prefix terms). Mroonga: the words are written space-separated and normalized
  // (search-terms.ts), so TokenDelimit reads them as they are (its default TokenBigram also matches inside words).
  const comment = engine === 'Mroonga' ? ` COMMENT 'tokenizer "TokenDelimit"'` : '';
  const fulltext = [
    `FULLTEXT KEY ${FULLTEXT_INDEX} (${text})${comment}`,
    ...TEXT_COLUMNS.map((column) => `FULLTEXT KEY ft_${column} (${column})${comment}`),
  ];
  if (engine === 'InnoDB') await queryRunner.query('SET SESSION innodb_ft_enable_stopword = 0');
  await queryRunner.query(`CREATE TABLE ${DOCUMENTS_TABLE} (
    package_id varchar(36) NOT NULL,
    name varchar(100) NOT NULL,
    name_lower varchar(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    visibility varchar(10) NOT NULL,
    publisher_id varchar(36) NOT NULL,
    package_type varchar(20) NOT NULL,
    total_downloads bigint NOT NULL,
    verified int NOT NULL,
    multiplier int NOT NULL,
    name_words text NOT NULL,
    display_words text NOT NULL,
    keyword_words text NOT NULL,
    description_words mediumtext NOT NULL,
    PRIMARY KEY (package_id),
    KEY ix_${DOCUMENTS_TABLE}_name (name_lower),
    KEY ix_${DOCUMENTS_TABLE}_publisher (publisher_id),
    ${fulltext.join(',\n    ')}
  ) ENGINE=${engine} DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
}

/**
 * Search moves onto the databases' own full-text engines (docs/search.md): SQLite FTS5, or
 * on MySQL/MariaDB a FULLTEXT table — Mroonga when the server offers it (SEARCH_MYSQL_ENGINE=auto),
 * otherwise InnoDB. The home-made term index (`package_search_terms`, `package_search_vocabulary`)
 * is dropped; the Search module fills the new table from `packages` at start-up (it starts empty).
 */
export class SearchFulltext1763800001500 implements MigrationInterface {
  name = 'SearchFulltext1763800001500';

  /** TypeORM constructs migrations without arguments: searchFulltextMigration binds the configured engine. */
  constructor(private readonly mysqlEngine: SearchMysqlEngineSetting = 'auto') {}

  async up(queryRunner: QueryRunner): Promise<void> {
    if (SqlDialect.of(queryRunner.connection).mysql) {
      const engine = await chooseMysqlFulltextEngine(queryRunner, this.mysqlEngine);
      new Logger('Migrations').log(`search documents table: ENGINE=${engine}`);
      await createMysqlSearchTables(queryRunner, engine);
    } else {
      await createSqliteSearchTables(queryRunner);
    }
    await queryRunner.dropTable('package_search_vocabulary', true);
    await queryRunner.dropTable('package_search_terms', true);
  }

  /** Back to the term index's final shape (migrations 100–700), empty: the old Search module rebuilds it. */
  async down(queryRunner: QueryRunner): Promise<void> {
    if (!SqlDialect.of(queryRunner.connection).mysql) await queryRunner.query(`DROP TABLE IF EXISTS ${FTS_TABLE}`);
    await queryRunner.query(`DROP TABLE IF EXISTS ${DOCUMENTS_TABLE}`);
    const column = new PortableColumns(queryRunner);
    const binary = column.binary();
    await queryRunner.createTable(
      new Table({
        name: 'package_search_terms',
        columns: [
          column.string('term', 64, { ...binary, isPrimary: true }),
          column.string('package_id', 36, { isPrimary: true }),
          column.string('field', 1, { ...binary, isPrimary: true }),
          column.integer('weight'),
          column.integer('boost'),
          column.integer('score'),
          column.string('visibility', 10, { default: "'public'" }),
          column.integer('verified'),
        ],
        indices: [
          new TableIndex({ name: 'ix_package_search_terms_package', columnNames: ['package_id'] }),
          new TableIndex({
            name: 'ix_package_search_terms_rank',
            columnNames: ['term', 'visibility', 'score', 'package_id', 'field'],
          }),
          new TableIndex({
            name: 'ix_package_search_terms_field',
            columnNames: ['field', 'term', 'visibility', 'score', 'package_id', 'verified'],
          }),
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'package_search_vocabulary',
        columns: [column.string('term', 64, { ...binary, isPrimary: true })],
      }),
    );
  }
}

/**
 * The migration with the configured table engine: a subclass TypeORM can construct without arguments. It keeps
 * the migration's name, so a database that already ran it does not run it again.
 */
export function searchFulltextMigration(mysqlEngine: SearchMysqlEngineSetting): typeof SearchFulltext1763800001500 {
  return class extends SearchFulltext1763800001500 {
    constructor() {
      super(mysqlEngine);
    }
  };
}
