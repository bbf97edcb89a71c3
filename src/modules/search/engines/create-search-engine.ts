import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DEFAULT_GROONGA_URL } from '../../../config/config.js';
import { SqlDialect } from '../../../database/sql-dialect.js';
import { Fts5SearchEngine } from './fts5-search-engine.js';
import { GroongaServerSearchEngine } from './groonga-server-search-engine.js';
import { MroongaSelectSearchEngine } from './mroonga-select-search-engine.js';
import { MysqlFulltextSearchEngine, documentsTableEngine } from './mysql-fulltext-search-engine.js';
import type { SearchEngine } from './search-engine.js';

/** `SEARCH_MROONGA_RANKING`: `groonga` (default) ranks inside Groonga when mroonga_command() is there, `sql` in SQL. */
export type MroongaRanking = 'groonga' | 'sql';

/** The configuration's search section (config.search); each setting has its default when left out. */
export interface SearchEngineOptions {
  /** `SEARCH_MROONGA_RANKING`, default `groonga`. */
  mroongaRanking?: MroongaRanking;
  /** `SEARCH_ENGINE`: `database` (default) or `groonga`, a dedicated Groonga server at groongaUrl. */
  engine?: 'database' | 'groonga';
  groongaUrl?: string;
}

/**
 * A dedicated Groonga server when asked for (SEARCH_ENGINE=groonga); else the engine of the database:
 * FTS5 on SQLite; on MySQL/MariaDB, whatever the documents table was created with, and on Mroonga ranked
 * by Groonga's own select when mroonga_command() is available.
 */
export async function createSearchEngine(
  dataSource: DataSource,
  options: SearchEngineOptions = {},
): Promise<SearchEngine> {
  const engine =
    options.engine === 'groonga'
      ? await GroongaServerSearchEngine.connect(options.groongaUrl ?? DEFAULT_GROONGA_URL)
      : SqlDialect.of(dataSource).mysql
        ? await mysqlEngine(dataSource, options)
        : new Fts5SearchEngine(dataSource);
  new Logger('Search').log(`search engine: ${engine.label}`);
  return engine;
}

async function mysqlEngine(
  dataSource: DataSource,
  options: { mroongaRanking?: MroongaRanking },
): Promise<SearchEngine> {
  const tableEngine = await documentsTableEngine(dataSource);
  const ranking = options.mroongaRanking ?? 'groonga';
  if (tableEngine === 'Mroonga' && ranking === 'groonga' && (await MroongaSelectSearchEngine.available(dataSource)))
    return new MroongaSelectSearchEngine(dataSource);
  return new MysqlFulltextSearchEngine(dataSource, tableEngine);
}
