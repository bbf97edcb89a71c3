import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { groongaCommand, parseSelectResult } from './groonga-command.js';
import { GroongaRanking } from './groonga-ranking.js';
import { MysqlFulltextSearchEngine } from './mysql-fulltext-search-engine.js';
import type { EnginePage, EngineQuery, EngineSuggest } from './search-engine.js';
import { DOCUMENTS_TABLE } from './search-schema.js';

/**
 * The MariaDB Mroonga documents table ranked inside Groonga: `select` through the `mroonga_command()`
 * UDF filters, scores and sorts top-k in C, instead of MariaDB reading every match's attributes and
 * sorting them (docs/search.md). The Mroonga table is the Groonga table of the same name, with the
 * text, the ranking attributes and the indexes (full-text per column, patricia trie on name_lower).
 * Writes are the SQL engine's; search, suggest and the relevance the oracle reads are Groonga's
 * (groonga-ranking.ts, with Groonga 7.0.7's unweighted prefix searches).
 */
export class MroongaSelectSearchEngine extends MysqlFulltextSearchEngine {
  override readonly label = 'MariaDB Mroonga, ranked by Groonga select (mroonga_command)';

  private readonly ranking = new GroongaRanking({
    select: (options) => this.select(options),
    idColumn: 'package_id',
    weightedPrefix: false,
  });

  constructor(private readonly connection: DataSource) {
    super(connection, 'Mroonga');
  }

  /**
   * Whether `mroonga_command()` answers; it is created from Mroonga's plugin when missing (that needs
   * the INSERT privilege on mysql.func). False, with the reason logged, when neither works.
   */
  static async available(dataSource: DataSource, logger = new Logger('Search')): Promise<boolean> {
    const probe = async () => {
      await dataSource.query(`SELECT mroonga_command('status') AS status`);
      return true;
    };
    try {
      return await probe();
    } catch {
      try {
        await dataSource.query(`CREATE FUNCTION IF NOT EXISTS mroonga_command RETURNS STRING SONAME 'ha_mroonga.so'`);
        return await probe();
      } catch (error) {
        logger.warn(`mroonga_command() is unavailable, search ranks in SQL: ${(error as Error).message}`);
        return false;
      }
    }
  }

  private async select(options: ReadonlyArray<readonly [string, string | number]>) {
    // The query cache is off: writes through MariaDB would not be seen by a cached answer. A word no
    // document holds never escalates to partial (prefix, infix) matches, as on the SQL path.
    const command = groongaCommand('select', [
      ['table', DOCUMENTS_TABLE],
      ...options,
      ['match_escalation_threshold', -1],
      ['cache', 'no'],
    ]);
    const rows: Array<{ output: string | Buffer | null }> = await this.connection.query(
      `SELECT mroonga_command(?) AS output`,
      [command],
    );
    return parseSelectResult(rows[0]?.output ?? null);
  }

  override search(query: EngineQuery): Promise<EnginePage> {
    return this.ranking.search(query);
  }

  override suggest(query: EngineSuggest): Promise<string[]> {
    return this.ranking.suggest(query);
  }

  override matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    return this.ranking.matchRelevance(terms);
  }
}
