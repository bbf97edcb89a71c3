import { COLUMN_WEIGHTS, prefixUpperBound } from '../search-terms.js';
import { type GroongaSelectResult, queryPhrase, scriptString } from './groonga-command.js';
import type { EnginePage, EngineQuery, EngineSuggest } from './search-engine.js';
import { assertPlainWord } from './search-engine-sql.js';
import { TEXT_COLUMNS } from './search-schema.js';

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
 * Groonga 7.0 (Mroonga's) ignores match column weights on prefix searches (each matching word scores 1):
 * there the prefix word is searched once per unit of weight, column by column, and the scores add up.
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
 * Which documents a viewer may find, as Groonga script conditions to be joined by `&&` (the visibility,
 * plus the package type filter).
 */
function visibleConditions(query: { viewerPublisherId: string | null; packageType?: string }): string[] {
  const conditions = [
    query.viewerPublisherId
      ? `(visibility == "public" || (publisher_id == ${scriptString(assertMatches(IDENTIFIER, query.viewerPublisherId, 'publisher id'))} && visibility == "private"))`
      : 'visibility == "public"',
  ];
  if (query.packageType)
    conditions.push(`package_type == ${scriptString(assertMatches(IDENTIFIER, query.packageType, 'package type'))}`);
  return conditions;
}

export type GroongaSelect = (
  options: ReadonlyArray<readonly [string, string | number]>,
) => Promise<GroongaSelectResult>;

export interface GroongaRankingOptions {
  /** Runs one `select` over the documents table (the table option is the caller's). */
  select: GroongaSelect;
  /** The column holding the package id: `package_id` on Mroonga, `_key` on a Groonga server's table. */
  idColumn: string;
  /**
   * Whether the Groonga weighs prefix searches by the match columns' weights (Groonga 13 does: one
   * weighted `query()`); Mroonga's 7.0.7 does not, so its prefix word is searched once per unit of weight.
   */
  weightedPrefix: boolean;
}

/**
 * Search, suggest and relevance as Groonga `select`s (docs/search.md, "MariaDB Mroonga: ranking inside
 * Groonga"): shared by MariaDB's Mroonga (through `mroonga_command()`) and a Groonga server of its own
 * (over HTTP). Each request's selects run one after the other: two at once contend inside Mroonga.
 */
export class GroongaRanking {
  constructor(private readonly options: GroongaRankingOptions) {}

  /**
   * Relevance: each matched word's count per column × the column weight, summed (exact and prefix words).
   * Unweighted, the prefix word is searched once per column: the same matches, for counting.
   */
  private textMatch(terms: EngineQuery['terms'], weighted = true): string {
    if (this.options.weightedPrefix)
      return `query(${scriptString(weighted ? MATCH_COLUMNS : TEXT_COLUMNS.join(' || '))}, ${scriptString(groongaQuery(terms))})`;
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
   * One select for an anonymous caller, two for a signed-in one. Each `&&` condition of a filter adds to
   * Groonga's score: 1 for a test of a column without an index (`visibility == "public"`, `package_type ==
   * …`), more when a branch goes through an index (the viewer's `publisher_id`). So an anonymous search
   * filters words, name, visibility and type in one select, its scorer takes the conditions' 1 each back
   * before ranking, and the select's hit count is the exact `total`. A signed-in viewer's visibility is an
   * OR whose score depends on the branch taken: that ranking select filters on the words and the name only
   * and its scorer sinks what the viewer may not see below every visible match (-1); a second select, run
   * after it, adds visibility and type to the filter, where the score does not matter (nor the weights),
   * and counts.
   */
  async search(query: EngineQuery): Promise<EnginePage> {
    const branches: string[] = [];
    if (query.terms.length > 0) branches.push(this.textMatch(query.terms));
    const conditions = visibleConditions(query);
    const oneSelect = query.viewerPublisherId === null;
    // The column term comes first in each sum: Groonga 7.0.7 computes `literal + _score` wrongly.
    const score = oneSelect ? `(_score - ${conditions.length})` : '_score';
    let ranking = `(${score} * multiplier)`;
    let startsWithSearch: string | null = null;
    if (query.name) {
      // Names starting with the query score 1 more (an index search on name_lower's patricia trie), the
      // exact name EXACT_NAME_SCORE more again; the scorer reads the tier back and ranks it first.
      const name = assertMatches(NAME, query.name, 'package name');
      startsWithSearch = `query("name_lower", ${scriptString(`${queryPrefix(name)}*`)})`;
      branches.push(startsWithSearch);
      branches.push(`query(${scriptString(`name_lower * ${EXACT_NAME_SCORE}`)}, ${scriptString(queryPhrase(name))})`);
      const startsWith = `(name_lower >= ${scriptString(name)} && name_lower < ${scriptString(prefixUpperBound(name))})`;
      ranking =
        `(${score} >= ${EXACT_NAME_SCORE} ? ((${score} - ${EXACT_NAME_SCORE + 1}) * multiplier + ${2 * TIER_SCORE}) : ` +
        `(${startsWith} ? ((${score} - 1) * multiplier + ${TIER_SCORE}) : (${score} * multiplier)))`;
    }
    if (branches.length === 0) return { ids: [], total: 0 };
    const matches = `(${branches.join(' || ')})`;
    const visible = conditions.join(' && ');
    const pageOptions = [
      ['sort_keys', '-_score,-total_downloads,name_lower'],
      ['output_columns', `${this.options.idColumn},_score`],
      ['offset', query.offset],
      ['limit', query.limit],
    ] as const;
    if (oneSelect) {
      const page = await this.options.select([
        ['filter', `${matches} && ${visible}`],
        ['scorer', `_score = ${ranking}`],
        ...pageOptions,
      ]);
      return { ids: page.rows.map((row) => String(row[0])), total: page.total };
    }
    const page = await this.options.select([
      ['filter', matches],
      ['scorer', `_score = ((${visible}) ? ${ranking} : -1)`],
      ...pageOptions,
    ]);
    // The same matches, counted without weights (the unweighted text match and the name range).
    const counted = [query.terms.length > 0 ? this.textMatch(query.terms, false) : null, startsWithSearch];
    const count = await this.options.select([
      ['filter', `(${counted.filter((branch) => branch !== null).join(' || ')}) && ${visible}`],
      ['limit', 0],
    ]);
    return { ids: page.rows.filter((row) => Number(row[1]) >= 0).map((row) => String(row[0])), total: count.total };
  }

  /**
   * Two selects, each sorted top-k inside Groonga: names starting with the text, then, when those leave
   * room, names with a word starting with it (minus the first's, `&!`).
   */
  async suggest(query: EngineSuggest): Promise<string[]> {
    const visible = visibleConditions({ viewerPublisherId: query.viewerPublisherId }).join(' && ');
    const wholeName =
      query.name === null
        ? null
        : `query("name_lower", ${scriptString(`${queryPrefix(assertMatches(NAME, query.name, 'package name'))}*`)})`;
    const top = (filter: string, limit: number) =>
      this.options
        .select([
          ['filter', filter],
          ['sort_keys', '-total_downloads,name_lower'],
          ['output_columns', 'name'],
          ['limit', limit],
        ])
        .then((result) => result.rows.map((row) => String(row[0])));
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

  /** Groonga's relevance of every match: the ranking select's text score, without name, filter or multiplier. */
  async matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>> {
    if (terms.length === 0) return new Map();
    const result = await this.options.select([
      ['filter', this.textMatch(terms)],
      ['output_columns', `${this.options.idColumn},_score`],
      ['limit', -1],
    ]);
    return new Map(result.rows.map((row) => [String(row[0]), Number(row[1])]));
  }
}
