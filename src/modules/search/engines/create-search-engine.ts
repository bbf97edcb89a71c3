import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { SqlDialect } from '../../../database/sql-dialect.js';
import { Fts5SearchEngine } from './fts5-search-engine.js';
import { MysqlFulltextSearchEngine, documentsTableEngine } from './mysql-fulltext-search-engine.js';
import type { SearchEngine } from './search-engine.js';

/** The engine of the database: FTS5 on SQLite; on MySQL/MariaDB, whatever the documents table was created with. */
export async function createSearchEngine(dataSource: DataSource): Promise<SearchEngine> {
  const engine = SqlDialect.of(dataSource).mysql
    ? new MysqlFulltextSearchEngine(dataSource, await documentsTableEngine(dataSource))
    : new Fts5SearchEngine(dataSource);
  new Logger('Search').log(`search engine: ${engine.label}`);
  return engine;
}
