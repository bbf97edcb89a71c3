import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource, In, type SelectQueryBuilder } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import type { Caller } from '../registry/caller.js';
import { PackageEntity, type PackageType } from '../registry/entities/package.entity.js';
import { PublisherEntity } from '../registry/entities/publisher.entity.js';
import { whereVisibleTo } from '../registry/publishers.service.js';
import { RegistryEvents } from '../registry/registry-events.js';
import { CountCache } from './count-cache.js';
import {
  FIELD_WEIGHTS,
  PREFIX_MIN_LENGTH,
  QUERY_MAX_LENGTH,
  SEARCH_FIELDS,
  clip,
  nameWords,
  parseQuery,
  popularityBoost,
  prefixUpperBound,
  words,
  type ParsedQuery,
  type QueryTerm,
  type SearchField,
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
/** Index rows read per match condition when counting (a package has at most a few rows per word). */
const TOTAL_COUNT_ROWS = 2_000;
const RANK_INDEX = 'ix_package_search_terms_rank';
const FIELD_INDEX = 'ix_package_search_terms_field';
/**
 * Name prefixes held by at least this many packages are read by walking the popularity index and
 * keeping names that match (a dense prefix fills the page early); sparser ones by their name range.
 */
const DENSE_NAME_PREFIX = 1_000;
/** How long another process's create, delete or visibility change can go unseen in the empty query's total. */
const PUBLIC_COUNT_LIFETIME_MS = 5_000;

interface ExpandedWord extends QueryTerm {
  /** The index words the query word matches, each read in index order (joined names aside). */
  words: string[];
  /** Whether there were too many to list, so the whole prefix range is read instead. */
  range: boolean;
}

/** The fields whose distinct words a query prefix is expanded to. */
const TEXT_WORD_FIELDS = [SEARCH_FIELDS.nameWord, SEARCH_FIELDS.displayName, SEARCH_FIELDS.keyword, SEARCH_FIELDS.description];

interface CandidateRead {
  ids: string[];
  /** Whether the read returned everything that matched it (it was not cut by its limit). */
  complete: boolean;
}

interface RankingRow {
  id: string;
  name: string;
  name_lower: string;
  visibility: string;
  publisher_id: string;
  total_downloads: string | number;
  verified: string | number;
}

interface RankedCandidate {
  id: string;
  tier: number;
  relevance: number;
  downloads: number;
  nameLower: string;
}

/**
 * Popularity as a small integer (about log10 of downloads, capped; the SQL twin of popularityBoost
 * minus 10), so the blend below is integer arithmetic: SQLite and MySQL then order ties identically.
 */
const POPULARITY_POINTS = `CASE WHEN p.total_downloads >= 1000000 THEN 6 WHEN p.total_downloads >= 100000 THEN 5
  WHEN p.total_downloads >= 10000 THEN 4 WHEN p.total_downloads >= 1000 THEN 3 WHEN p.total_downloads >= 100 THEN 2
  WHEN p.total_downloads >= 10 THEN 1 ELSE 0 END`;
/** The weight of the field a term was found in (search-terms.ts FIELD_WEIGHTS). */
const FIELD_WEIGHT = `CASE t.field ${Object.entries(FIELD_WEIGHTS)
  .map(([field, weight]) => `WHEN '${field}' THEN ${weight}`)
  .join(' ')} ELSE 0 END`;
// A verified publisher's packages count 20 % more (12 against 10).
const VERIFIED_FACTOR = `CASE WHEN pub.verification_status = 'verified' THEN 12 ELSE 10 END`;

/**
 * Search and autocomplete over the registry's own term index (`package_search_terms`).
 *
 * Ranking: an exact package-name match first, then names that start with the query, then the rest;
 * within each tier, text relevance (per query word, the best field it matches — name words 8,
 * display name 6, keywords 5, description 2, doubled for a whole word — summed, times the number of
 * words matched) multiplied by popularity (10 + log10 of downloads, capped at 16) and by 1.2 for a
 * verified publisher; then downloads, then name. Visibility, downloads and verification come from
 * the registry's tables at query time, so a change to them shows at once.
 *
 * Speed: the index rows carry a stored score (field weight × popularity boost) and the package's
 * visibility, so a query reads only the best few hundred rows of each word in index order and ranks
 * those candidates exactly in memory (see `ranked`), instead of joining and sorting every package
 * that contains a common word. The stored score only chooses candidates (verification is applied in
 * the exact ranking alone); it follows downloads at each power of ten, and a lagging row can never
 * show a package the caller may not see, since visibility is checked again on the package row.
 */
@Injectable()
export class SearchService implements OnModuleInit {
  private readonly mysql: boolean;
  /** Public packages per package type ('' for all), the bulk of the empty query's total. */
  private readonly publicCounts = new CountCache(PUBLIC_COUNT_LIFETIME_MS);

  constructor(
    private readonly dataSource: DataSource,
    private readonly events: RegistryEvents,
  ) {
    this.mysql = dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';
  }

  onModuleInit(): void {
    // Create, update (visibility, type) and version changes all announce packageChanged; delete its own event.
    this.events.onPackageChanged(() => this.publicCounts.invalidate());
    this.events.onPackageDeleted(() => this.publicCounts.invalidate());
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
   * CANDIDATES_PER_WORD best index rows by stored score (field weight × popularity boost), each
   * index word a query prefix expands to read in index order; for the name tiers, the exact name
   * and the most popular names that start with the query; and the caller's own private packages.
   * Every candidate is then scored exactly from its rows and its live package row (visibility,
   * downloads, verification), so the order within the set is the exact order. When no read was cut
   * by its limit the set holds every match and the answer is exact, total included; otherwise the
   * page comes from the best candidates and `total` is counted up to TOTAL_COUNT_LIMIT.
   */
  private async ranked(caller: Caller, request: SearchRequest, parsed: ParsedQuery): Promise<SearchPage> {
    if (request.packageType) return this.exactRanked(caller, request, parsed);
    const offset = offsetOf(request.page, request.perPage);
    const expanded = await Promise.all(parsed.terms.map((term) => this.expand(term)));
    const reads = await Promise.all([
      ...expanded.map((word) => this.candidatesOfWord(word)),
      parsed.name ? this.candidatesOfName(parsed.name) : Promise.resolve({ ids: [], complete: true }),
      this.ownPrivatePackages(caller),
    ]);
    const complete = reads.every((read) => read.complete);
    const candidates = [...new Set(reads.flatMap((read) => read.ids))];
    // When the total must be counted, it is counted while the candidates are ranked (one round trip less).
    const [ranked, counted] = await Promise.all([
      this.rankCandidates(caller, candidates, parsed, expanded),
      complete ? Promise.resolve(0) : this.countMatches(caller, parsed, expanded),
    ]);
    if (complete) return { hits: await this.hydrate(ranked.slice(offset, offset + request.perPage)), total: ranked.length };
    // A page past the candidates needs every match ranked.
    if (offset + request.perPage > ranked.length) return this.exactRanked(caller, request, parsed);
    const total = Math.max(ranked.length, counted);
    return { hits: await this.hydrate(ranked.slice(offset, offset + request.perPage)), total };
  }

  /**
   * The index words a query word stands for: itself, plus for a prefix the words of the name, display
   * name, keyword and description fields that start with it (joined names are read as a range).
   */
  private async expand({ term, prefix }: QueryTerm): Promise<ExpandedWord> {
    if (!prefix) return { term, prefix, words: [term], range: false };
    const end = prefixUpperBound(term);
    const found = this.mysql ? await this.vocabularyBySeeks(term, end) : await this.vocabularyByRecursion(term, end);
    // Too many words to read one by one (a very short prefix): the range is read as a whole, sorted.
    if (found.length > VOCABULARY_LIMIT) return { term, prefix, words: [], range: true };
    return { term, prefix, words: found, range: false };
  }

  /** MariaDB answers MIN over an index prefix from the index alone, but not inside a recursive CTE: one seek per round trip. */
  private async vocabularyBySeeks(term: string, end: string): Promise<string[]> {
    const perField = await Promise.all(
      TEXT_WORD_FIELDS.map(async (field) => {
        const found: string[] = [];
        let after: string | null = null;
        while (found.length <= VOCABULARY_LIMIT) {
          const [row]: Array<{ term: string | null }> = await this.dataSource.query(
            `SELECT MIN(term) AS term FROM package_search_terms WHERE field = ? AND term ${after === null ? '>=' : '>'} ? AND term < ?`,
            [field, after ?? term, end],
          );
          if (!row || row.term === null) break;
          found.push(row.term);
          after = row.term;
        }
        return found;
      }),
    );
    return [...new Set(perField.flat())].sort();
  }

  private async vocabularyByRecursion(term: string, end: string): Promise<string[]> {
    const fields = TEXT_WORD_FIELDS.map((field) => `SELECT '${field}' AS field`).join(' UNION ALL ');
    // A loose index scan per field over (field, term): each step seeks the next distinct word, so a
    // word held by 70,000 packages costs one seek, not 70,000 rows.
    const rows: Array<{ term: string }> = await this.dataSource.query(
      `WITH RECURSIVE vocabulary(field, term, depth) AS (
         SELECT f.field, (SELECT MIN(t.term) FROM package_search_terms t WHERE t.field = f.field AND t.term >= ? AND t.term < ?), 1 FROM (${fields}) f
         UNION ALL
         SELECT v.field, (SELECT MIN(t.term) FROM package_search_terms t WHERE t.field = v.field AND t.term > v.term AND t.term < ?), v.depth + 1
         FROM vocabulary v WHERE v.term IS NOT NULL AND v.depth <= ${VOCABULARY_LIMIT}
       )
       SELECT DISTINCT term FROM vocabulary WHERE term IS NOT NULL`,
      [term, end, end],
    );
    return rows.map((row) => row.term).sort();
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
    const range = word.range
      ? `SELECT package_id, term, score FROM package_search_terms ${this.useIndex(RANK_INDEX)} WHERE term >= ? AND term < ? AND ${text} ORDER BY score DESC, package_id DESC LIMIT ?`
      : word.prefix
        ? `SELECT package_id, term, score FROM package_search_terms ${this.useIndex(FIELD_INDEX)}
           WHERE field = '${SEARCH_FIELDS.joinedName}' AND term >= ? AND term < ? AND visibility = 'public'
           ORDER BY score DESC, package_id DESC LIMIT ?`
        : null;
    if (range) {
      parameters.push(word.term, word.term, prefixUpperBound(word.term), limit);
      reads.push(`SELECT r.package_id, r.score * CASE WHEN r.term = ? THEN 2 ELSE 1 END AS ranking FROM (${range}) r`);
    }
    if (reads.length === 0) return { ids: [], complete: true };
    parameters.push(limit);
    const rows: Array<{ package_id: string }> = await this.dataSource.query(`${reads.join(' UNION ALL ')} ORDER BY ranking DESC, package_id DESC LIMIT ?`, parameters);
    return { ids: rows.map((row) => row.package_id), complete: rows.length < limit };
  }

  /** The package named exactly so (any visibility, checked later), and the most downloaded public names starting with it. */
  private async candidatesOfName(name: string): Promise<CandidateRead> {
    const limit = CANDIDATES_PER_WORD;
    const [exact, popular] = await Promise.all([
      this.dataSource.query(`SELECT id FROM packages WHERE name_lower = ?`, [name]) as Promise<Array<{ id: string }>>,
      this.popularNamesStartingWith(name, limit),
    ]);
    return { ids: [...exact.map((row) => row.id), ...popular], complete: popular.length < limit };
  }

  /** Ids of public packages whose name starts with `prefix`, most downloaded first. */
  private async popularNamesStartingWith(prefix: string, limit: number): Promise<string[]> {
    const end = prefixUpperBound(prefix);
    const [{ packages }] = (await this.dataSource.query(
      `SELECT COUNT(*) AS packages FROM (SELECT 1 AS one FROM packages WHERE name_lower >= ? AND name_lower < ? LIMIT ${DENSE_NAME_PREFIX}) named`,
      [prefix, end],
    )) as Array<{ packages: string | number }>;
    // Planners guess between the two without knowing the prefix's density; for a dense prefix the popularity
    // order reaches the limit early, for a sparse one the name range is small.
    const chosen = Number(packages) < DENSE_NAME_PREFIX ? 'uq_packages_name_lower' : 'ix_packages_visible_popularity';
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM packages ${this.useIndex(chosen)} WHERE visibility = 'public' AND name_lower >= ? AND name_lower < ?
       ORDER BY total_downloads DESC, name_lower DESC, id DESC LIMIT ?`,
      [prefix, end, limit],
    );
    return rows.map((row) => row.id);
  }

  /** An authenticated caller's private packages (their public ones are in the public reads). */
  private async ownPrivatePackages(caller: Caller): Promise<CandidateRead> {
    if (!caller.publisherId) return { ids: [], complete: true };
    const limit = CANDIDATES_PER_WORD;
    const rows: Array<{ id: string }> = await this.dataSource.query(`SELECT id FROM packages WHERE publisher_id = ? AND visibility = 'private' LIMIT ?`, [
      caller.publisherId,
      limit,
    ]);
    return { ids: rows.map((row) => row.id), complete: rows.length < limit };
  }

  /** The candidates the caller may see and the query matches, in the exact ranking order. */
  private async rankCandidates(caller: Caller, candidates: string[], parsed: ParsedQuery, words: ExpandedWord[]): Promise<string[]> {
    if (candidates.length === 0) return [];
    const [packages, matches] = await Promise.all([this.rankingRows(candidates), this.textMatches(candidates, words)]);
    const scored: RankedCandidate[] = [];
    for (const row of packages) {
      if (!searchableTo(caller, row)) continue;
      const nameTerm = clip(row.name_lower);
      const tier = parsed.name === null ? 0 : nameTerm === parsed.name ? 2 : nameTerm.startsWith(parsed.name) ? 1 : 0;
      let text = 0;
      let matched = 0;
      for (const { term, prefix } of parsed.terms) {
        let best = 0;
        for (const match of matches.get(row.id) ?? []) {
          const weight = FIELD_WEIGHTS[match.field as SearchField] ?? 0;
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
      const relevance = text * matched * popularityBoost(downloads) * (Number(row.verified) === 1 ? 12 : 10);
      scored.push({ id: row.id, tier, relevance, downloads, nameLower: row.name_lower });
    }
    scored.sort(
      (a, b) => b.tier - a.tier || b.relevance - a.relevance || b.downloads - a.downloads || (a.nameLower < b.nameLower ? -1 : a.nameLower > b.nameLower ? 1 : 0),
    );
    return scored.map((candidate) => candidate.id);
  }

  private rankingRows(ids: string[]): Promise<RankingRow[]> {
    return this.dataSource.query(
      // The publisher's verification joined in, rather than read in a second round trip.
      `SELECT p.id, p.name, p.name_lower, p.visibility, p.publisher_id, p.total_downloads,
              CASE WHEN pub.verification_status = 'verified' THEN 1 ELSE 0 END AS verified
       FROM packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id WHERE p.id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
  }

  /**
   * Every text row of the candidates, by package; the query's words are matched in rankCandidates.
   * A few thousand rows by package id cost less than filtering them by word in SQL (MariaDB
   * evaluates an OR of word conditions row by row, about four times slower).
   */
  private async textMatches(ids: string[], words: ExpandedWord[]): Promise<Map<string, Array<{ term: string; field: string }>>> {
    const byPackage = new Map<string, Array<{ term: string; field: string }>>();
    if (words.length === 0) return byPackage;
    const rows: Array<{ package_id: string; term: string; field: string }> = await this.dataSource.query(
      // By package: the planner would otherwise walk the rows of common words for a few hundred packages.
      `SELECT package_id, term, field FROM package_search_terms ${this.useIndex('ix_package_search_terms_package')}
       WHERE package_id IN (${ids.map(() => '?').join(', ')}) AND field <> '${SEARCH_FIELDS.fullName}'`,
      ids,
    );
    for (const row of rows) {
      const list = byPackage.get(row.package_id);
      if (list) list.push(row);
      else byPackage.set(row.package_id, [row]);
    }
    return byPackage;
  }

  /**
   * How many packages the caller may see match, when that is more than the candidates: each match
   * condition is read up to TOTAL_COUNT_ROWS index rows (streamed in index order, never sorted), the
   * packages counted once, and the answer capped at TOTAL_COUNT_LIMIT.
   */
  private async countMatches(caller: Caller, parsed: ParsedQuery, words: ExpandedWord[]): Promise<number> {
    const conditions: Array<[string, string[], string]> = [];
    const text = `field <> '${SEARCH_FIELDS.fullName}'`;
    for (const word of words) {
      if (word.prefix) conditions.push([`term >= ? AND term < ? AND ${text}`, [word.term, prefixUpperBound(word.term)], RANK_INDEX]);
      else conditions.push([`term = ? AND ${text}`, [word.term], RANK_INDEX]);
    }
    if (parsed.name) {
      conditions.push([`field = '${SEARCH_FIELDS.fullName}' AND term >= ? AND term < ?`, [parsed.name, prefixUpperBound(parsed.name)], FIELD_INDEX]);
    }
    if (conditions.length === 0) return 0;
    const parameters: Array<string | number> = [];
    const reads = conditions.map(([condition, values, index], position) => {
      parameters.push(...values, TOTAL_COUNT_ROWS);
      return `SELECT m${position}.package_id FROM (SELECT package_id FROM package_search_terms ${this.useIndex(index)} WHERE ${condition} AND visibility = 'public' LIMIT ?) m${position}`;
    });
    if (caller.publisherId) {
      reads.push(
        `SELECT t.package_id FROM packages p INNER JOIN package_search_terms t ON t.package_id = p.id
         WHERE p.publisher_id = ? AND p.visibility = 'private' AND (${conditions.map(([condition]) => `(${condition})`).join(' OR ')})`,
      );
      parameters.push(caller.publisherId, ...conditions.flatMap(([, values]) => values));
    }
    const rows: Array<{ total: string | number }> = await this.dataSource.query(`SELECT COUNT(*) AS total FROM (${reads.join(' UNION ')}) matches`, parameters);
    return Math.min(Number(rows[0]?.total ?? 0), TOTAL_COUNT_LIMIT);
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
        if (whole || (wordPrefix !== null && nameWords(row.name).some((word) => word.startsWith(wordPrefix)))) suggestions.set(row.id, { whole, row });
      }
    };
    // Whole-name prefixes come first, so names with a matching word are only read when they are too few.
    await consider([...(name ? await this.popularNamesStartingWith(name, CANDIDATES_PER_WORD) : []), ...(await this.ownPrivatePackages(caller)).ids]);
    if (wordPrefix && [...suggestions.values()].filter((entry) => entry.whole).length < limit) {
      await consider((await this.candidatesOfWord(await this.expand({ term: wordPrefix, prefix: true }))).ids);
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
    const filtered = (query: SelectQueryBuilder<PackageEntity>) => {
      searchable(query, caller);
      if (request.packageType) query.andWhere('p.package_type = :packageType', { packageType: request.packageType });
      return query;
    };
    const repository = this.dataSource.getRepository(PackageEntity);
    const [total, rows] = await Promise.all([
      this.countSearchable(caller, request.packageType),
      filtered(repository.createQueryBuilder('p').select('p.id', 'id'))
        .orderBy('p.total_downloads', 'DESC')
        // The (total_downloads, id) index serves this order without sorting every package.
        .addOrderBy('p.id', 'DESC')
        .offset(offsetOf(request.page, request.perPage))
        .limit(request.perPage)
        .getRawMany<{ id: string }>(),
    ]);
    return { hits: await this.hydrate(rows.map((row) => row.id)), total };
  }

  /**
   * What the empty query lists, counted: the public packages (cached, see CountCache) plus the
   * caller's own private ones (few, read through the publisher index). Unlisted packages are never listed.
   */
  private async countSearchable(caller: Caller, packageType: PackageType | undefined): Promise<number> {
    const repository = this.dataSource.getRepository(PackageEntity);
    const ofType = (query: SelectQueryBuilder<PackageEntity>) => (packageType ? query.andWhere('p.package_type = :packageType', { packageType }) : query);
    const [publicCount, ownPrivateCount] = await Promise.all([
      this.publicCounts.get(packageType ?? '', () => ofType(repository.createQueryBuilder('p').where("p.visibility = 'public'")).getCount()),
      caller.publisherId
        ? ofType(repository.createQueryBuilder('p').where("p.publisher_id = :publisherId AND p.visibility = 'private'", { publisherId: caller.publisherId })).getCount()
        : Promise.resolve(0),
    ]);
    return publicCount + ownPrivateCount;
  }

  /**
   * The exact ranking over every match, in one SQL statement: what the candidate path falls back to
   * for pages past its candidates and for a package_type filter. It sorts every match, so a common
   * word costs a scan of everything that contains it.
   */
  private async exactRanked(caller: Caller, request: SearchRequest, parsed: ParsedQuery): Promise<SearchPage> {
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

    const query = this.dataSource
      .createQueryBuilder()
      .select('p.id', 'id')
      .addSelect('COUNT(*) OVER ()', 'total')
      .from(matches, 'm')
      .innerJoin(PackageEntity, 'p', 'p.id = m.package_id')
      .leftJoin(PublisherEntity, 'pub', 'pub.id = p.publisher_id')
      .setParameters(parameters);
    searchable(query, caller);
    if (request.packageType) query.andWhere('p.package_type = :packageType', { packageType: request.packageType });
    query
      .orderBy('m.tier', 'DESC')
      .addOrderBy(`m.text_score * m.matched * (10 + ${POPULARITY_POINTS}) * ${VERIFIED_FACTOR}`, 'DESC')
      .addOrderBy('p.total_downloads', 'DESC')
      .addOrderBy(this.binary('p.name_lower'), 'ASC')
      .offset(offsetOf(request.page, request.perPage))
      .limit(request.perPage);

    const rows = await query.getRawMany<{ id: string; total: string | number }>();
    let total = rows.length > 0 ? Number(rows[0].total) : 0;
    if (rows.length === 0 && request.page > 1) {
      // Past the last page the window function has no row to report on.
      const counted = await this.dataSource.createQueryBuilder().select('COUNT(*)', 'total').from(matches, 'm').innerJoin(PackageEntity, 'p', 'p.id = m.package_id').setParameters(parameters);
      searchable(counted, caller);
      if (request.packageType) counted.andWhere('p.package_type = :packageType', { packageType: request.packageType });
      total = Number((await counted.getRawOne<{ total: string | number }>())?.total ?? 0);
    }
    return { hits: await this.hydrate(rows.map((row) => row.id)), total };
  }

  /** Full rows for one page of ids, in the given order. */
  private async hydrate(ids: string[]): Promise<SearchHit[]> {
    if (ids.length === 0) return [];
    // Both reads at once: the publishers are found through the packages' publisher ids in SQL.
    const [packages, publisherRows] = await Promise.all([
      this.dataSource.getRepository(PackageEntity).findBy({ id: In(ids) }),
      this.dataSource
        .getRepository(PublisherEntity)
        .createQueryBuilder('pub')
        .where('pub.id IN (SELECT hp.publisher_id FROM packages hp WHERE hp.id IN (:...ids))', { ids })
        .getMany(),
    ]);
    const publishers = new Map(publisherRows.map((publisher) => [publisher.id, publisher]));
    const byId = new Map(packages.map((pkg) => [pkg.id, pkg]));
    return ids.flatMap((id) => {
      const pkg = byId.get(id);
      if (!pkg) return []; // deleted between the two queries
      const publisher = publishers.get(pkg.publisherId) ?? null;
      return [{ pkg, publisher, verified: publisher?.verificationStatus === 'verified' }];
    });
  }

  /** An index hint in the engine's syntax. */
  private useIndex(index: string): string {
    return this.mysql ? `FORCE INDEX (${index})` : `INDEXED BY ${index}`;
  }

  /** Code point order on both engines (MySQL's default collation would order `_` and `-` differently). */
  private binary(expression: string): string {
    return this.mysql ? `${expression} COLLATE utf8mb4_bin` : expression;
  }
}

/** searchable() for a row already read: public, or the caller's own private packages; never unlisted. */
function searchableTo(caller: Caller, row: Pick<RankingRow, 'visibility' | 'publisher_id'>): boolean {
  if (row.visibility === 'public') return true;
  return row.visibility === 'private' && caller.publisherId !== null && row.publisher_id === caller.publisherId;
}

/** What search may show: what the caller can list, except unlisted packages, which are found by name only (even by their owner). */
function searchable<T extends object>(query: SelectQueryBuilder<T>, caller: Caller): SelectQueryBuilder<T> {
  return whereVisibleTo(query, 'p', caller, { listing: true }).andWhere("p.visibility <> 'unlisted'");
}
