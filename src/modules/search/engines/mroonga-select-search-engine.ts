import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { COLUMN_WEIGHTS, prefixUpperBound } from '../search-terms.js';
import { groongaCommand, parseSelectResult, queryPhrase, scriptString } from './groonga-command.js';
import { MysqlFulltextSearchEngine } from './mysql-fulltext-search-engine.js';
import type { EnginePage, EngineQuery, EngineSuggest } from './search-engine.js';
import { assertPlainWord } from './search-engine-sql.js';
import { DOCUMENTS_TABLE, TEXT_COLUMNS } from './search-schema.js';

/** The text columns' weights, in TEXT_COLUMNS order. */
const WEIGHTS = [COLUMN_WEIGHTS.name, COLUMN_WEIGHTS.displayName, COLUMN_WEIGHTS.keywords, COLUMN_WEIGHTS.description];

/** Each text column with its weight: Groonga sums the matched columns' term frequencies × weight. */
const MATCH_COLUMNS = TEXT_COLUMNS.map((column, index) => `${column} * ${WEIGHTS[index]}`).join(' || ');

/**
 * Integer ranking inside Groonga's Int32 `_score`. Text relevance stays below 2^15: a document holds at
 * most about 8,900 weighted words (name 100, display name 200, keywords 20 × 50, description 5,000
 * characters: registry.dto.ts), and one word matches at most two query words (itself and a prefix).
 * So EXACT_NAME_SCORE (2^20) marks the exact name, relevance × multiplier (at most 1,920) stays below
 * 2^26, and tier × TIER_SCORE (2^29) + relevance × multiplier fits in Int32.
 */
const EXACT_NAME_SCORE = 2 ** 20;
const TIER_SCORE = 2 ** 29;

/** A query syntax word with every character but letters and digits escaped (a prefix cannot be a phrase). */
function queryPrefix(word: string): string {
  return word.replace(/[^a-z0-9]/g, '\\$&');
}

/**
 * Groonga 7.0 ignores match column weights on prefix searches (each matching word scores 1): the
 * prefix word is searched once per unit of weight, column by column, and the scores add up.
 */
const PREFIX_COLUMNS = TEXT_COLUMNS.flatMap((column, index) =>
  Array.from<string>({ length: WEIGHTS[index] }).fill(column),
);

/** Names are [a-z0-9._-] (search-terms.ts parseQuery); ids and types are ours. Checked again before quoting. */
const NAME = /^[a-z0-9._-]{1,100}$/;
const IDENTIFIER = /^[A-Za-z0-9_-]{1,64}$/;

function assertMatches(pattern: RegExp, value: string, what: string): string {
  if (!pattern.test(value)) throw new Error(`not a ${what}: ${value}`);
  return value;
}

/**
 * `cloud OR "sync"*`… as Groonga query syntax: optional words, the prefix one starred. Each word is
 * a phrase (quoted) so no character is an operator; a prefix cannot be a phrase, so it is a plain word
 * (letters and digits only: assertPlainWord) followed by `*`.
 */
export function groongaQuery(terms: EngineQuery['terms']): string {
  return terms.map((term) => (term.prefix ? `${assertPlainWord(term)}*` : queryPhrase(term.term))).join(' OR ');
}

/**
 * The MariaDB Mroonga documents table ranked inside Groonga: `select` through the `mroonga_command()`
 * UDF filters, scores and sorts top-k in C, instead of MariaDB reading every match's attributes and
 * sorting them (docs/search.md). The Mroonga table is the Groonga table of the same name, with the
 * text, the ranking attributes and the indexes (full-text per column, patricia trie on name_lower).
 * Writes are the SQL engine's; search, suggest and the relevance the oracle reads are Groonga's.
 */
export class MroongaSelectSearchEngine extends MysqlFulltextSearchEngine {
  override readonly label = 'MariaDB Mroonga, ranked by Groonga select (mroonga_command)';

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

  private visibleFilter(query: { viewerPublisherId: string | null; packageType?: string }): string {
    const conditions = [
      query.viewerPublisherId
        ? `(visibility == "public" || (publisher_id == ${scriptString(assertMatches(IDENTIFIER, query.viewerPublisherId, 'publisher id'))} && visibility == "private"))`
        : 'visibility == "public"',
    ];
    if (query.packageType)
      conditions.push(`package_type == ${scriptString(assertMatches(IDENTIFIER, query.packageType, 'package type'))}`);
    return conditions.join(' && ');
  }

  /**
   * Relevance: each matched word's count per column × the column weight, summed (exact and prefix words).
   * Unweighted, the prefix word is searched once per column: the same matches, for counting.
   */
  private textMatch(terms: EngineQuery['terms'], weighted = true): string {
    const branches: string[] = [];
    const exact = terms.filter((term) => !term.prefix);
    if (exact.length > 0) branches.push(`query(${scriptString(MATCH_COLUMNS)}, ${scriptString(groongaQuery(exact))})`);
    for (const term of terms.filter((candidate) => candidate.prefix)) {
      const prefix = scriptString(`${assertPlainWord(term)}*`);
      const columns = weighted ? PREFIX_COLUMNS : TEXT_COLUMNS;
      branches.push(...columns.map((column) => `query(${scriptString(column)}, ${prefix})`));
    }
    return `(${branches.join(' || ')})`;
  }

  /**
   * Two selects over the same matches, run side by side. Filter conditions add to Groonga's score (each
   * `&&` term 1, a branch searched through an index more), so the ranking select filters on the words
   * and the name only and its scorer sinks what the viewer may not see below every visible match (-1);
   * the counting select adds visibility and type to the filter, where the score does not matter (nor the
   * weights: its prefix word is searched once per column, not once per unit of weight).
   */
  override async search(query: EngineQuery): Promise<EnginePage> {
    const branches: string[] = [];
    if (query.terms.length > 0) branches.push(this.textMatch(query.terms));
    const counted: string[] = query.terms.length > 0 ? [this.textMatch(query.terms, false)] : [];
    let ranking = '(_score * multiplier)';
    if (query.name) {
      // Names starting with the query score 1 more (an index search on name_lower's patricia trie), the
      // exact name EXACT_NAME_SCORE more again; the scorer reads the tier back and ranks it first.
      const name = assertMatches(NAME, query.name, 'package name');
      const startsWithSearch = `query("name_lower", ${scriptString(`${queryPrefix(name)}*`)})`;
      branches.push(startsWithSearch);
      counted.push(startsWithSearch);
      branches.push(`query(${scriptString(`name_lower * ${EXACT_NAME_SCORE}`)}, ${scriptString(queryPhrase(name))})`);
      const startsWith = `(name_lower >= ${scriptString(name)} && name_lower < ${scriptString(prefixUpperBound(name))})`;
      // The column term comes first in each sum: Groonga 7.0.7 computes `literal + _score` wrongly.
      ranking =
        `(_score >= ${EXACT_NAME_SCORE} ? ((_score - ${EXACT_NAME_SCORE + 1}) * multiplier + ${2 * TIER_SCORE}) : ` +
        `(${startsWith} ? ((_score - 1) * multiplier + ${TIER_SCORE}) : (_score * multiplier)))`;
    }
    if (branches.length === 0) return { ids: [], total: 0 };
    const matches = `(${branches.join(' || ')})`;
    const visible = this.visibleFilter(query);
    // One select after the other: two mroonga_command() calls at once on two connections contend inside
    // Mroonga and take longer together than one after the other (docs/search.md).
    const page = await this.select([
      ['filter', matches],
      ['scorer', `_score = ((${visible}) ? ${ranking} : -1)`],
      ['sort_keys', '-_score,-total_downloads,name_lower'],
      ['output_columns', 'package_id,_score'],
      ['offset', query.offset],
      ['limit', query.limit],
    ]);
    const count = await this.select([
      ['filter', `(${counted.join(' || ')}) && ${visible}`],
      ['limit', 0],
    ]);
    return { ids: page.rows.filter((row) => Number(row[1]) >= 0).map((row) => String(row[0])), total: count.total };
  }

  /**
   * The SQL engine's two branches as two selects, each sorted top-k inside Groonga: names starting with
   * the text, then, when those leave room, names with a word starting with it (minus the first's, `&!`).
   */
  override async suggest(query: EngineSuggest): Promise<string[]> {
    const visible = this.visibleFilter({ viewerPublisherId: query.viewerPublisherId });
    const wholeName =
      query.name === null
        ? null
        : `query("name_lower", ${scriptString(`${queryPrefix(assertMatches(NAME, query.name, 'package name'))}*`)})`;
    const top = (filter: string, limit: number) =>
      this.select([
        ['filter', filter],
        ['sort_keys', '-total_downloads,name_lower'],
        ['output_columns', 'name'],
        ['limit', limit],
      ]).then((result) => result.rows.map((row) => String(row[0])));
    // One after the other (two mroonga_command() calls at once contend), and the second only when the
    // first leaves room.
    const whole = wholeName ? await top(`${wholeName} && ${visible}`, query.limit) : [];
    const wanted = query.limit - whole.length;
    const word =
      query.wordPrefix && wanted > 0
        ? await top(
            `query("name_words", ${scriptString(`${assertPlainWord({ term: query.wordPrefix, prefix: true })}*`)})` +
              `${wholeName ? ` &! ${wholeName}` : ''} && ${visible}`,
            wanted,
          )
        : [];
    return [...whole, ...word];
  }

  override async matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const result = await this.select([
      ['filter', this.textMatch(terms)],
      ['output_columns', 'package_id, _score'],
      ['limit', -1],
    ]);
    return new Map(result.rows.map((row) => [String(row[0]), Number(row[1])]));
  }
}
