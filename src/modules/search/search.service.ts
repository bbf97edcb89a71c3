import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { publish, subscribe } from '../../cluster/cluster-bus.js';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import { SqlDialect } from '../../database/sql-dialect.js';
import type { Caller } from '../registry/caller.js';
import type { PackageEntity } from '../registry/entities/package.entity.js';
import type { PublisherEntity } from '../registry/entities/publisher.entity.js';
import type { PackageType, Visibility } from '../registry/registry-vocabulary.js';
import { PackageCatalogRepository, type PackageRankingRow } from '../registry/package-catalog.repository.js';
import { isVisible } from '../registry/package-visibility.js';
import { RegistryEvents } from '../registry/registry-events.js';
import { CountCache } from './count-cache.js';
import {
  FIELD_WEIGHTS,
  PREFIX_MIN_LENGTH,
  QUERY_MAX_LENGTH,
  SEARCH_FIELDS,
  UNVERIFIED_FACTOR,
  clip,
  documentTerms,
  nameWords,
  parseQuery,
  popularityBoost,
  popularityBoostSql,
  prefixUpperBound,
  verificationFactor,
  verificationFactorSql,
  words,
  type ParsedQuery,
  type DocumentTerm,
  type QueryTerm,
} from './search-terms.js';

export interface SearchRequest {
  query: string;
  page: number;
  perPage: number;
  packageType?: PackageType;
}

export interface SearchHit {
  pkg: PackageEntity;
  publisher: PublisherEntity | null;
  verified: boolean;
}

export interface SearchPage {
  hits: SearchHit[];
  total: number;
}

type Parameters = Record<string, string | number>;

/** Index rows read per query word (and for the name tiers) before exact ranking. */
const CANDIDATES_PER_WORD = 100;
/** Index words a query prefix may expand to and still be read word by word, in index order. */
const VOCABULARY_LIMIT = 40;
/** `total` of a query with more candidates than were read is counted up to this many matches. */
export const TOTAL_COUNT_LIMIT = 1_000;
const RANK_INDEX = 'ix_package_search_terms_rank';
const FIELD_INDEX = 'ix_package_search_terms_field';
/** Rows read of each whole word of a query of several words, to find the packages that hold most of them. */
const WHOLE_WORD_ROWS = 3_000;
/** Queries of up to this many words are searched for packages holding most of them. */
const TOGETHER_MAX_WORDS = 4;
/**
 * Name prefixes held by at least this many packages are read by walking the popularity index and
 * keeping names that match (a dense prefix fills the page early); sparser ones by their name range.
 */
const DENSE_NAME_PREFIX = 1_000;
/**
 * A package name's words joined, from its stored lower-case name: names are ASCII letters, digits
 * and `.`, `_`, `-`, so this is exactly the joined-name term of the index (search-terms.ts splitName).
 */
const JOINED_NAME = `REPLACE(REPLACE(REPLACE(p.name_lower, '-', ''), '_', ''), '.', '')`;
/**
 * How long another process's create, delete or visibility change can go unseen in the empty query's
 * total (CountCache): re-counted in the background after 5 s, at the latest after 30 s, as the
 * registry's cached package views. Changes made by this service, all cluster workers included, show at once.
 */
const PUBLIC_COUNT_LIFETIMES = { freshMs: 5_000, staleMs: 30_000 };
/** Cluster channel on which workers tell each other that the public package count changed. */
const PUBLIC_COUNT_CHANNEL = 'search.public-count';

interface ExpandedWord extends QueryTerm {
  /** The index words the query word matches, each read in index order (joined names aside). */
  words: string[];
  /** Whether there were too many to list, so the whole prefix range is read instead. */
  range: boolean;
  /** Whether at least DENSE_NAME_PREFIX joined names start with the word (read in popularity order, then). */
  denseJoinedNames: boolean;
}

interface ScoredRow {
  package_id: string;
  score: number | string;
}

interface CandidateRead {
  ids: string[];
  /** Whether the read returned everything that matched it (it was not cut by its limit). */
  complete: boolean;
}

type RankingRow = PackageRankingRow;

interface RankedCandidate {
  id: string;
  tier: number;
  relevance: number;
  downloads: number;
  nameLower: string;
}

/** popularityBoost of a package row, in SQL, so the exact ranking's arithmetic is the candidates' arithmetic. */
const POPULARITY = popularityBoostSql('p.total_downloads');
/** The weight of the field a term was found in (search-terms.ts FIELD_WEIGHTS). */
const FIELD_WEIGHT = `CASE t.field ${Object.entries(FIELD_WEIGHTS)
  .map(([field, weight]) => `WHEN '${field}' THEN ${weight}`)
  .join(' ')} ELSE 0 END`;
/** A verified publisher's packages count 20 % more (search-terms.ts verificationFactor). */
const VERIFICATION = verificationFactorSql(`pub.verification_status = 'verified'`);

/**
 * Search and autocomplete over the registry's own term index (`package_search_terms`).
 *
 * Ranking: an exact package-name match first, then names that start with the query, then the rest;
 * within each tier, text relevance (per query word, the best field it matches — name words 8,
 * display name 6, keywords 5, description 2, doubled for a whole word — summed, times the number of
 * words matched) multiplied by popularity (100 + 10 × log10 of downloads, capped at 160) and by 1.2 for a
 * verified publisher; then downloads, then name. Visibility, downloads and verification come from
 * the registry's tables at query time, so a change to them shows at once.
 *
 * Speed: the index rows carry a stored score (field weight × popularity boost × verification, the
 * one-word ranking itself) and the package's visibility, so a query reads only the best few hundred
 * rows of each word in index order and ranks those candidates exactly in memory (see `ranked`),
 * instead of joining and sorting every package that contains a common word. The score follows
 * downloads in steps of about 26 % and verification as admins decide; a lagging row can never show
 * a package the caller may not see, since visibility is checked again on the package row. A page is
 * the exact ranking's page unless many packages share one score at its boundary (ties are broken by
 * downloads in the ranking, by id in the read) or a package that matches several words is among the
 * best WHOLE_WORD_ROWS of none of them (see holdingMost); the scale test (test/e2e/registry/
 * search-scale) holds the fast path to the exact ranking, and bench/search-accuracy.ts measures how
 * often they agree on realistic data.
 */
@Injectable()
export class SearchService implements OnModuleInit {
  private readonly dialect: SqlDialect;
  /** Public packages per package type ('' for all), the bulk of the empty query's total. */
  private readonly publicCounts = new CountCache(PUBLIC_COUNT_LIFETIMES);

  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: PackageCatalogRepository,
    private readonly events: RegistryEvents,
  ) {
    this.dialect = SqlDialect.of(dataSource);
  }

  onModuleInit(): void {
    // Create, update (visibility, type) and version changes all announce packageChanged; delete its own event.
    const invalidate = () => {
      this.publicCounts.invalidate();
      publish(PUBLIC_COUNT_CHANNEL, null);
    };
    this.events.onPackageChanged(invalidate);
    this.events.onPackageDeleted(invalidate);
    subscribe(PUBLIC_COUNT_CHANNEL, () => this.publicCounts.invalidate());
  }

  async search(caller: Caller, request: SearchRequest): Promise<SearchPage> {
    if (request.query.length > QUERY_MAX_LENGTH) {
      throw new PlatformError('UNPROCESSABLE_ENTITY', `q is longer than ${QUERY_MAX_LENGTH} characters`, [
        { field: 'q', message: `must be at most ${QUERY_MAX_LENGTH} characters` },
      ]);
    }
    const parsed = parseQuery(request.query);
    if (request.query.trim() === '') return this.popular(caller, request);
    if (!parsed.name && parsed.terms.length === 0) return { hits: [], total: 0 };
    return this.ranked(caller, request, parsed);
  }

  /**
   * The ranking of exactRanked, computed over a bounded candidate set: for each query word, the
   * CANDIDATES_PER_WORD best index rows by stored score (field weight × popularity × verification),
   * each index word a query prefix expands to read in index order; for several words, the packages
   * that hold most of them and the names that hold them in order; for the name tiers, the exact name
   * and the most popular names that start with the query; and the caller's own private packages.
   * Every candidate is then scored exactly from its rows and its live package row (visibility,
   * downloads, verification), so the order within the set is the exact order. When no read was cut
   * by its limit the set holds every match and the answer is exact, total included; otherwise the
   * page comes from the best candidates and `total` is counted up to TOTAL_COUNT_LIMIT.
   */
  private async ranked(caller: Caller, request: SearchRequest, parsed: ParsedQuery): Promise<SearchPage> {
    if (request.packageType) return this.exactRanked(caller, request, parsed);
    const offset = offsetOf(request.page, request.perPage);
    const expanded = await this.expand(parsed.terms);
    // The total is counted while the candidates are read: it is needed whenever a read is cut by its
    // limit (common words), and a query whose reads all complete matches few rows, so counting is cheap.
    const wholeWords = this.readWholeWords(expanded);
    const [counted, namedTogether, together, ...reads] = await Promise.all([
      this.countMatches(caller, parsed, expanded),
      this.candidatesNamedTogether(parsed.terms),
      wholeWords ? Promise.all(wholeWords).then((rows) => this.holdingMost(rows)) : Promise.resolve([]),
      ...expanded.map((word, index) =>
        wholeWords && !word.prefix
          ? wholeWords[index].then((rows) => this.wordRead(rows))
          : this.candidatesOfWord(word),
      ),
      parsed.name ? this.candidatesOfName(parsed.name) : Promise.resolve({ ids: [], complete: true }),
      this.ownPrivatePackages(caller),
    ]);
    // The reads for several words together are subsets of the words' matches: they add candidates, not completeness.
    const complete = reads.every((read) => read.complete);
    const candidates = [...new Set([...namedTogether, ...together, ...reads.flatMap((read) => read.ids)])];
    const ranked = await this.rankCandidates(caller, candidates, parsed);
    if (complete)
      return { hits: await this.hydrate(ranked.slice(offset, offset + request.perPage)), total: ranked.length };
    // A page past the candidates needs every match ranked.
    if (offset + request.perPage > ranked.length) return this.exactRanked(caller, request, parsed);
    const total = Math.max(ranked.length, counted);
    return { hits: await this.hydrate(ranked.slice(offset, offset + request.perPage)), total };
  }

  /**
   * The index words each query word stands for: itself, plus for a prefix the words of the name,
   * display name, keyword and description fields that start with it (from the vocabulary; joined
   * names are read as a range), and whether the joined names starting with it are dense. One
   * statement for every word of the query: one index range read and one bounded count per prefix.
   */
  private async expand(terms: QueryTerm[]): Promise<ExpandedWord[]> {
    const selects: string[] = [];
    const parameters: string[] = [];
    terms.forEach(({ term, prefix }, index) => {
      if (!prefix) return;
      const end = prefixUpperBound(term);
      selects.push(
        `SELECT ${index} AS word, v.term AS term, NULL AS names
         FROM (SELECT term FROM package_search_vocabulary WHERE term >= ? AND term < ? ORDER BY term LIMIT ${VOCABULARY_LIMIT + 1}) v`,
        `SELECT ${index} AS word, NULL AS term, COUNT(*) AS names FROM (SELECT 1 AS one FROM package_search_terms ${this.useIndex(FIELD_INDEX)}
         WHERE field = '${SEARCH_FIELDS.joinedName}' AND term >= ? AND term < ? LIMIT ${DENSE_NAME_PREFIX}) j`,
      );
      parameters.push(term, end, term, end);
    });
    const rows: Array<{ word: string | number; term: string | null; names: string | number | null }> =
      selects.length > 0 ? await this.dataSource.query(selects.join(' UNION ALL '), parameters) : [];
    return terms.map(({ term, prefix }, index) => {
      if (!prefix) return { term, prefix, words: [term], range: false, denseJoinedNames: false };
      const mine = rows.filter((row) => Number(row.word) === index);
      const found = mine.flatMap((row) => (row.term === null ? [] : [row.term]));
      const denseJoinedNames = mine.some((row) => row.names !== null && Number(row.names) >= DENSE_NAME_PREFIX);
      // Too many words to read one by one (a very short prefix): the range is read as a whole, sorted.
      if (found.length > VOCABULARY_LIMIT) return { term, prefix, words: [], range: true, denseJoinedNames };
      // The word itself is always read, should the vocabulary lack it.
      return { term, prefix, words: [...new Set([term, ...found])], range: false, denseJoinedNames };
    });
  }

  /** The best public rows of one query word, across the index words it expands to. */
  private async candidatesOfWord(word: ExpandedWord): Promise<CandidateRead> {
    const limit = CANDIDATES_PER_WORD;
    const parameters: Array<string | number> = [];
    const text = `visibility = 'public' AND field <> '${SEARCH_FIELDS.fullName}'`;
    // An exact word counts double a prefix match (as in exactRanked).
    const reads = word.words.map((indexWord, index) => {
      parameters.push(indexWord === word.term ? 2 : 1, indexWord, limit);
      return `SELECT c${index}.package_id, c${index}.score * ? AS ranking FROM
        (SELECT package_id, score FROM package_search_terms WHERE term = ? AND ${text} ORDER BY score DESC, package_id DESC LIMIT ?) c${index}`;
    });
    // Index hints: MariaDB otherwise uses only the `field` part of the field index and scans every joined name.
    const ranges = word.range
      ? [
          `SELECT package_id, term, score FROM package_search_terms ${this.useIndex(RANK_INDEX)} WHERE term >= ? AND term < ? AND ${text} ORDER BY score DESC, package_id DESC LIMIT ?`,
        ]
      : !word.prefix
        ? []
        : word.denseJoinedNames
          ? [
              // Thousands of joined names start with the word (it is a common first word): sorting them all by score
              // costs tens of milliseconds, while the most downloaded packages, walked in order, reach the limit early.
              // The stored score of an unverified package (joined-name weight × popularity × 10), computed from the
              // index alone (the publisher would cost a row lookup per name walked).
              this.catalog.popularPublicByKeySql(
                JOINED_NAME,
                `p.id AS package_id, ${JOINED_NAME} AS term, ${FIELD_WEIGHTS[SEARCH_FIELDS.joinedName]} * ${POPULARITY} * ${UNVERIFIED_FACTOR} AS score`,
              ),
              // A verified package outranks ones with several times its downloads, so the walk may pass it by: the
              // verified few are read apart, by stored score, from the field index (which holds the flag, so the range
              // is filtered without reading rows, and only its verified rows are sorted). Between them the two hold the
              // best `limit` by score: an unverified package is outranked by every package with more downloads, a
              // verified one by every verified one with more (one the walk scored as unverified and this read missed
              // is not among them).
              `SELECT package_id, term, score FROM package_search_terms ${this.useIndex(FIELD_INDEX)}
               WHERE field = '${SEARCH_FIELDS.joinedName}' AND term >= ? AND term < ? AND visibility = 'public' AND verified = 1
               ORDER BY score DESC, package_id DESC LIMIT ?`,
            ]
          : [
              `SELECT package_id, term, score FROM package_search_terms ${this.useIndex(FIELD_INDEX)}
               WHERE field = '${SEARCH_FIELDS.joinedName}' AND term >= ? AND term < ? AND visibility = 'public'
               ORDER BY score DESC, package_id DESC LIMIT ?`,
            ];
    for (const range of ranges) {
      parameters.push(word.term, word.term, prefixUpperBound(word.term), limit);
      reads.push(`SELECT r.package_id, r.score * CASE WHEN r.term = ? THEN 2 ELSE 1 END AS ranking FROM (${range}) r`);
    }
    if (reads.length === 0) return { ids: [], complete: true };
    // A package read twice (in two fields, two words of the expansion, or the walk and the verified read) counts
    // once, at its best: twice the limit of rows leaves room for repeats (a GROUP BY here costs MariaDB a temporary
    // table of every read's rows). Under the limit, no read was cut by it.
    parameters.push(2 * limit);
    const rows: Array<{ package_id: string }> = await this.dataSource.query(
      `${reads.join(' UNION ALL ')} ORDER BY ranking DESC, package_id DESC LIMIT ?`,
      parameters,
    );
    const ids = [...new Set(rows.map((row) => row.package_id))].slice(0, limit);
    return { ids, complete: rows.length < limit };
  }

  /**
   * For a query of several words, the public packages whose name holds them in that order (`meta
   * tracer` → meta-tracer-hub, metaTracer): names whose words joined start with the query's words
   * joined. They match every word, often among the best, yet each word alone may be too common for
   * them to be among its best rows.
   */
  private async candidatesNamedTogether(terms: QueryTerm[]): Promise<string[]> {
    if (terms.length < 2) return [];
    const joined = clip(terms.map((term) => term.term).join(''));
    const rows: Array<{ package_id: string }> = await this.dataSource.query(
      // A one-word name has no joined row: its name word is the joined form.
      `SELECT package_id FROM package_search_terms ${this.useIndex(RANK_INDEX)}
       WHERE term >= ? AND term < ? AND visibility = 'public' AND field IN ('${SEARCH_FIELDS.joinedName}', '${SEARCH_FIELDS.nameWord}')
       ORDER BY score DESC, package_id DESC LIMIT ${CANDIDATES_PER_WORD}`,
      [joined, prefixUpperBound(joined)],
    );
    return rows.map((row) => row.package_id);
  }

  /**
   * For a query of two to TOGETHER_MAX_WORDS words, the WHOLE_WORD_ROWS best public rows of each whole
   * word by stored score (index order, no sort), or null for other queries. They serve twice: as a
   * whole word's own candidate read (see wordRead), and together (see holdingMost).
   */
  private readWholeWords(words: QueryTerm[]): Array<Promise<ScoredRow[]>> | null {
    if (words.length < 2 || words.length > TOGETHER_MAX_WORDS) return null;
    return words.map((word) =>
      this.dataSource.query(
        `SELECT package_id, score FROM package_search_terms ${this.useIndex(RANK_INDEX)}
         WHERE term = ? AND visibility = 'public' AND field <> '${SEARCH_FIELDS.fullName}' ORDER BY score DESC, package_id DESC LIMIT ${WHOLE_WORD_ROWS}`,
        [word.term],
      ),
    );
  }

  /**
   * A whole word's candidate read from its best rows: the first CANDIDATES_PER_WORD packages, complete
   * when they are all the word has (the same as candidatesOfWord, which reads only as many rows).
   */
  private wordRead(rows: ScoredRow[]): CandidateRead {
    const ids = [...new Set(rows.map((row) => row.package_id))];
    return {
      ids: ids.slice(0, CANDIDATES_PER_WORD),
      complete: rows.length < WHOLE_WORD_ROWS && ids.length <= CANDIDATES_PER_WORD,
    };
  }

  /**
   * The packages that hold the most of a query's words, best first: those outrank every package that
   * holds fewer (exactRanked sums the best field of each word and multiplies by the number held), yet
   * each word alone may be too common for them to be among its best CANDIDATES_PER_WORD rows. Ranked
   * by that text score over the words' best rows (read by readWholeWords): for packages of equal
   * popularity and verification, the exact ranking. A package is missed when its rows are outside the
   * best WHOLE_WORD_ROWS of its words, or it holds a prefix word only as a longer word (`trac` typed
   * so far: the per-word reads find those).
   */
  private holdingMost(reads: ScoredRow[][]): string[] {
    const best = new Map<string, number[]>();
    reads.forEach((rows, word) => {
      for (const row of rows) {
        let scores = best.get(row.package_id);
        if (!scores) best.set(row.package_id, (scores = new Array<number>(reads.length).fill(0)));
        // Rows come best first: the first of a package is its best field.
        if (scores[word] === 0) scores[word] = Number(row.score);
      }
    });
    const ranked = [...best].map(([id, scores]) => ({
      id,
      text: scores.reduce((sum, score) => sum + score, 0) * scores.filter((score) => score > 0).length,
    }));
    ranked.sort((a, b) => b.text - a.text || (a.id < b.id ? 1 : -1));
    return ranked.slice(0, reads.length * CANDIDATES_PER_WORD).map((entry) => entry.id);
  }

  /** The package named exactly so (any visibility, checked later), and the most downloaded public names starting with it. */
  private async candidatesOfName(name: string): Promise<CandidateRead> {
    const limit = CANDIDATES_PER_WORD;
    const [exact, popular] = await Promise.all([
      this.catalog.idsNamed(name),
      this.popularNamesStartingWith(name, limit),
    ]);
    return { ids: [...exact.map((row) => row.id), ...popular], complete: popular.length < limit };
  }

  /** Ids of public packages whose name starts with `prefix`, most downloaded first. */
  private popularNamesStartingWith(prefix: string, limit: number): Promise<string[]> {
    return this.catalog.popularPublicIdsNamedFrom(prefix, prefixUpperBound(prefix), limit, DENSE_NAME_PREFIX);
  }

  /** An authenticated caller's private packages (their public ones are in the public reads). */
  private async ownPrivatePackages(caller: Caller): Promise<CandidateRead> {
    if (!caller.publisherId) return { ids: [], complete: true };
    const limit = CANDIDATES_PER_WORD;
    const ids = await this.catalog.privateIdsOf(caller.publisherId, limit);
    return { ids, complete: ids.length < limit };
  }

  /**
   * The candidates the caller may see and the query matches, in the exact ranking order. Their words
   * are taken from the package rows read for ranking, by the tokenizer that writes the index
   * (documentTerms), rather than read back from the index: a few hundred short rows instead of
   * thousands of index entries, and always the package's current text.
   */
  private async rankCandidates(caller: Caller, candidates: string[], parsed: ParsedQuery): Promise<string[]> {
    if (candidates.length === 0) return [];
    const packages = await this.rankingRows(candidates, true);
    const scored: RankedCandidate[] = [];
    for (const row of packages) {
      if (!searchableTo(caller, row)) continue;
      const nameTerm = clip(row.name_lower);
      const tier = parsed.name === null ? 0 : nameTerm === parsed.name ? 2 : nameTerm.startsWith(parsed.name) ? 1 : 0;
      const documentWords = parsed.terms.length === 0 ? [] : textTerms(row);
      let text = 0;
      let matched = 0;
      for (const { term, prefix } of parsed.terms) {
        let best = 0;
        for (const match of documentWords) {
          const weight = FIELD_WEIGHTS[match.field];
          if (match.term === term) best = Math.max(best, 2 * weight);
          else if (prefix && match.term.startsWith(term)) best = Math.max(best, weight);
        }
        if (best > 0) {
          text += best;
          matched += 1;
        }
      }
      if (tier === 0 && matched === 0) continue;
      const downloads = Number(row.total_downloads);
      const relevance = text * matched * popularityBoost(downloads) * verificationFactor(Number(row.verified) === 1);
      scored.push({ id: row.id, tier, relevance, downloads, nameLower: row.name_lower });
    }
    scored.sort(
      (a, b) =>
        b.tier - a.tier ||
        b.relevance - a.relevance ||
        b.downloads - a.downloads ||
        (a.nameLower < b.nameLower ? -1 : a.nameLower > b.nameLower ? 1 : 0),
    );
    return scored.map((candidate) => candidate.id);
  }

  private rankingRows(ids: string[], withText = false): Promise<RankingRow[]> {
    return this.catalog.rankingRows(ids, withText);
  }

  /**
   * How many packages the caller may see match, when that is more than the candidates, counted up to
   * TOTAL_COUNT_LIMIT. Each read yields distinct packages and stops at the limit: an index word's
   * packages stream in primary-key order (term, package), joined and whole names have one row per
   * package; only a prefix too short to list its words is read as a plain range of rows. The reads
   * are then counted once each.
   */
  private async countMatches(caller: Caller, parsed: ParsedQuery, words: ExpandedWord[]): Promise<number> {
    const limit = TOTAL_COUNT_LIMIT;
    const text = `field <> '${SEARCH_FIELDS.fullName}'`;
    const reads: string[] = [];
    const parameters: Array<string | number> = [];
    // For the caller's own private packages: every condition, on their (few) rows.
    const conditions: Array<[string, string[]]> = [];
    for (const word of words) {
      const end = prefixUpperBound(word.term);
      conditions.push(
        word.prefix ? [`term >= ? AND term < ? AND ${text}`, [word.term, end]] : [`term = ? AND ${text}`, [word.term]],
      );
      if (word.range) {
        reads.push(
          `SELECT package_id FROM package_search_terms ${this.useIndex(RANK_INDEX)} WHERE term >= ? AND term < ? AND ${text} AND visibility = 'public' LIMIT ${limit}`,
        );
        parameters.push(word.term, end);
        continue;
      }
      for (const indexWord of word.words) {
        reads.push(
          `SELECT package_id FROM package_search_terms ${this.dialect.usePrimaryKey()}
           WHERE term = ? AND ${text} AND visibility = 'public' GROUP BY package_id LIMIT ${limit}`,
        );
        parameters.push(indexWord);
      }
      if (word.prefix) {
        reads.push(
          `SELECT package_id FROM package_search_terms ${this.useIndex(FIELD_INDEX)}
           WHERE field = '${SEARCH_FIELDS.joinedName}' AND term >= ? AND term < ? AND visibility = 'public' LIMIT ${limit}`,
        );
        parameters.push(word.term, end);
      }
    }
    if (parsed.name) {
      const name: [string, string[]] = [
        `field = '${SEARCH_FIELDS.fullName}' AND term >= ? AND term < ?`,
        [parsed.name, prefixUpperBound(parsed.name)],
      ];
      conditions.push(name);
      reads.push(
        `SELECT package_id FROM package_search_terms ${this.useIndex(FIELD_INDEX)} WHERE ${name[0]} AND visibility = 'public' LIMIT ${limit}`,
      );
      parameters.push(...name[1]);
    }
    if (reads.length === 0) return 0;
    const wrapped = reads.map((read, position) => `SELECT m${position}.package_id FROM (${read}) m${position}`);
    const unionParameters = [...parameters];
    if (caller.publisherId) {
      wrapped.push(
        `${this.catalog.privateOfPublisherJoinSql('package_search_terms')} AND (${conditions.map(([condition]) => `(${condition})`).join(' OR ')})`,
      );
      unionParameters.push(caller.publisherId, ...conditions.flatMap(([, values]) => values));
    }
    // When one read alone reaches the limit (a common word), the answer is the limit: the union of all
    // reads (thousands of rows to deduplicate) is only built otherwise. Both engines evaluate CASE and OR lazily.
    const reachesLimit = reads.map(
      (read, position) => `(SELECT COUNT(DISTINCT c${position}.package_id) FROM (${read}) c${position}) >= ${limit}`,
    );
    const rows: Array<{ total: string | number }> = await this.dataSource.query(
      `SELECT CASE WHEN ${reachesLimit.join(' OR ')} THEN ${limit} ELSE (SELECT COUNT(*) FROM (${wrapped.join(' UNION ')}) matches) END AS total`,
      [...parameters, ...unionParameters],
    );
    return Math.min(Number(rows[0]?.total ?? 0), limit);
  }

  /** Names that complete `prefix`: whole-name prefixes first, then names with a word that starts with it. */
  async suggest(caller: Caller, prefix: string, limit: number): Promise<string[]> {
    if (prefix.length > QUERY_MAX_LENGTH) {
      throw new PlatformError('UNPROCESSABLE_ENTITY', `q is longer than ${QUERY_MAX_LENGTH} characters`, [
        { field: 'q', message: `must be at most ${QUERY_MAX_LENGTH} characters` },
      ]);
    }
    const { name } = parseQuery(prefix);
    const firstWord = words(prefix)[0];
    const wordPrefix = firstWord && Array.from(firstWord).length >= PREFIX_MIN_LENGTH ? firstWord : null;
    if (!name && !wordPrefix) return [];
    const suggestions = new Map<string, { whole: boolean; row: RankingRow }>();
    const consider = async (ids: string[]) => {
      const fresh = [...new Set(ids)].filter((id) => !suggestions.has(id));
      for (const row of fresh.length > 0 ? await this.rankingRows(fresh) : []) {
        if (!searchableTo(caller, row)) continue;
        const whole = name !== null && clip(row.name_lower).startsWith(name);
        if (whole || (wordPrefix !== null && nameWords(row.name).some((word) => word.startsWith(wordPrefix))))
          suggestions.set(row.id, { whole, row });
      }
    };
    // Whole-name prefixes come first, so names with a matching word are only read when they are too few.
    await consider([
      ...(name ? await this.popularNamesStartingWith(name, CANDIDATES_PER_WORD) : []),
      ...(await this.ownPrivatePackages(caller)).ids,
    ]);
    if (wordPrefix && [...suggestions.values()].filter((entry) => entry.whole).length < limit) {
      const [expanded] = await this.expand([{ term: wordPrefix, prefix: true }]);
      await consider((await this.candidatesOfWord(expanded)).ids);
    }
    return [...suggestions.values()]
      .sort(
        (a, b) =>
          Number(b.whole) - Number(a.whole) ||
          Number(b.row.total_downloads) - Number(a.row.total_downloads) ||
          (a.row.name_lower < b.row.name_lower ? -1 : a.row.name_lower > b.row.name_lower ? 1 : 0),
      )
      .slice(0, limit)
      .map((entry) => entry.row.name);
  }

  /** An empty query: every visible package, most downloaded first. */
  private async popular(caller: Caller, request: SearchRequest): Promise<SearchPage> {
    const [total, ids] = await Promise.all([
      this.countSearchable(caller, request.packageType),
      this.catalog.popularSearchableIds(caller, request.packageType, request.page, request.perPage),
    ]);
    return { hits: await this.hydrate(ids), total };
  }

  /**
   * What the empty query lists, counted: the public packages (cached, see CountCache) plus the
   * caller's own private ones (few, read through the publisher index). Unlisted packages are never listed.
   */
  private async countSearchable(caller: Caller, packageType: PackageType | undefined): Promise<number> {
    const [publicCount, ownPrivateCount] = await Promise.all([
      this.publicCounts.get(packageType ?? '', () => this.catalog.countPublic(packageType)),
      caller.publisherId ? this.catalog.countPrivateOf(caller.publisherId, packageType) : Promise.resolve(0),
    ]);
    return publicCount + ownPrivateCount;
  }

  /**
   * The exact ranking over every match, in one SQL statement: what the candidate path falls back to
   * for pages past its candidates and for a package_type filter, and the reference the accuracy
   * benchmark compares the fast path with. It sorts every match, so a common word costs a scan of
   * everything that contains it.
   */
  async exactRanked(caller: Caller, request: SearchRequest, parsed: ParsedQuery): Promise<SearchPage> {
    const parameters: Parameters = {};
    const candidates: string[] = [];
    parsed.terms.forEach(({ term, prefix }, index) => {
      parameters[`term${index}`] = term;
      if (prefix) {
        parameters[`termEnd${index}`] = prefixUpperBound(term);
        candidates.push(
          `SELECT t.package_id AS package_id, MAX(CASE WHEN t.term = :term${index} THEN 2 ELSE 1 END * ${FIELD_WEIGHT}) AS score, 1 AS matched, 0 AS tier
           FROM package_search_terms t WHERE t.field <> '${SEARCH_FIELDS.fullName}' AND t.term >= :term${index} AND t.term < :termEnd${index}
           GROUP BY t.package_id`,
        );
      } else {
        candidates.push(
          `SELECT t.package_id AS package_id, MAX(2 * ${FIELD_WEIGHT}) AS score, 1 AS matched, 0 AS tier
           FROM package_search_terms t WHERE t.field <> '${SEARCH_FIELDS.fullName}' AND t.term = :term${index}
           GROUP BY t.package_id`,
        );
      }
    });
    if (parsed.name) {
      Object.assign(parameters, { name: parsed.name, nameEnd: prefixUpperBound(parsed.name) });
      candidates.push(
        `SELECT t.package_id AS package_id, 0 AS score, 0 AS matched, CASE WHEN t.term = :name THEN 2 ELSE 1 END AS tier
         FROM package_search_terms t WHERE t.field = '${SEARCH_FIELDS.fullName}' AND t.term >= :name AND t.term < :nameEnd`,
      );
    }
    const matches = `(SELECT c.package_id AS package_id, SUM(c.score) AS text_score, SUM(c.matched) AS matched, MAX(c.tier) AS tier
      FROM (${candidates.join(' UNION ALL ')}) c GROUP BY c.package_id)`;

    const query = this.catalog
      .searchableMatches(matches, parameters, caller, request.packageType)
      .select('p.id', 'id')
      .addSelect('COUNT(*) OVER ()', 'total')
      .orderBy('m.tier', 'DESC')
      .addOrderBy(`m.text_score * m.matched * ${POPULARITY} * ${VERIFICATION}`, 'DESC')
      .addOrderBy('p.total_downloads', 'DESC')
      .addOrderBy(this.binary('p.name_lower'), 'ASC')
      .offset(offsetOf(request.page, request.perPage))
      .limit(request.perPage);

    const rows = await query.getRawMany<{ id: string; total: string | number }>();
    let total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0 && request.page > 1) {
      // Past the last page the window function has no row to report on.
      const counted = this.catalog
        .searchableMatches(matches, parameters, caller, request.packageType, { withPublisher: false })
        .select('COUNT(*)', 'total');
      total = Number((await counted.getRawOne<{ total: string | number }>())?.total ?? 0);
    }
    return { hits: await this.hydrate(rows.map((row) => row.id)), total };
  }

  /** Full rows for one page of ids, in the given order. */
  private async hydrate(ids: string[]): Promise<SearchHit[]> {
    if (ids.length === 0) return [];
    const { packages, publishers: publisherRows } = await this.catalog.packagesWithPublishers(ids);
    const publishers = new Map(publisherRows.map((publisher) => [publisher.id, publisher]));
    const byId = new Map(packages.map((pkg) => [pkg.id, pkg]));
    return ids.flatMap((id) => {
      const pkg = byId.get(id);
      if (!pkg) return []; // deleted between the two queries
      const publisher = publishers.get(pkg.publisherId) ?? null;
      return [{ pkg, publisher, verified: publisher?.verificationStatus === 'verified' }];
    });
  }

  private useIndex(index: string): string {
    return this.dialect.useIndex(index);
  }

  /** Code point order on both engines. */
  private binary(expression: string): string {
    return this.dialect.binary(expression);
  }
}

/** The text terms (every field but the whole name) the index holds for this package row. */
function textTerms(row: RankingRow): DocumentTerm[] {
  let keywords: unknown = null;
  try {
    keywords = row.keywords ? JSON.parse(row.keywords) : null;
  } catch {
    keywords = null;
  }
  const document = {
    name: row.name,
    displayName: row.display_name ?? null,
    description: row.description ?? null,
    keywords: Array.isArray(keywords)
      ? keywords.filter((keyword): keyword is string => typeof keyword === 'string')
      : null,
  };
  return documentTerms(document).filter((term) => term.field !== SEARCH_FIELDS.fullName);
}

/** A row already read, by the search rule (public, or the caller's own private packages; never unlisted). */
function searchableTo(caller: Caller, row: Pick<RankingRow, 'visibility' | 'publisher_id'>): boolean {
  return isVisible(caller, { visibility: row.visibility as Visibility, publisherId: row.publisher_id }, 'search');
}
