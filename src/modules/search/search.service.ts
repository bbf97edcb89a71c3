import { Injectable } from '@nestjs/common';
import { DataSource, In, type SelectQueryBuilder } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import type { Caller } from '../registry/caller.js';
import { PackageEntity, type PackageType } from '../registry/entities/package.entity.js';
import { PublisherEntity } from '../registry/entities/publisher.entity.js';
import { PublishersService, whereVisibleTo } from '../registry/publishers.service.js';
import { FIELD_WEIGHTS, PREFIX_MIN_LENGTH, QUERY_MAX_LENGTH, SEARCH_FIELDS, parseQuery, prefixUpperBound, words, type ParsedQuery } from './search-terms.js';

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

/**
 * Popularity as a small integer (about log10 of downloads, capped), so the blend below is integer
 * arithmetic: SQLite and MySQL then order ties and near-ties identically.
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
 */
@Injectable()
export class SearchService {
  private readonly mysql: boolean;

  constructor(
    private readonly dataSource: DataSource,
    private readonly publishers: PublishersService,
  ) {
    this.mysql = dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';
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

  /** Names that complete `prefix`: whole-name prefixes first, then names with a word that starts with it. */
  async suggest(caller: Caller, prefix: string, limit: number): Promise<string[]> {
    if (prefix.length > QUERY_MAX_LENGTH) {
      throw new PlatformError('UNPROCESSABLE_ENTITY', `q is longer than ${QUERY_MAX_LENGTH} characters`, [
        { field: 'q', message: `must be at most ${QUERY_MAX_LENGTH} characters` },
      ]);
    }
    const { name } = parseQuery(prefix);
    const firstWord = words(prefix)[0];
    const matchers: string[] = [];
    const parameters: Parameters = {};
    if (name) {
      matchers.push(`(t.field = '${SEARCH_FIELDS.fullName}' AND t.term >= :name AND t.term < :nameEnd)`);
      Object.assign(parameters, { name, nameEnd: prefixUpperBound(name) });
    }
    if (firstWord && Array.from(firstWord).length >= PREFIX_MIN_LENGTH) {
      matchers.push(`(t.field = '${SEARCH_FIELDS.nameWord}' AND t.term >= :word AND t.term < :wordEnd)`);
      Object.assign(parameters, { word: firstWord, wordEnd: prefixUpperBound(firstWord) });
    }
    if (matchers.length === 0) return [];
    // Grouped first, so the few matching terms drive the join rather than every visible package.
    const matches = `(SELECT t.package_id AS package_id, MAX(CASE WHEN t.field = '${SEARCH_FIELDS.fullName}' THEN 1 ELSE 0 END) AS whole_name
      FROM package_search_terms t WHERE ${matchers.join(' OR ')} GROUP BY t.package_id)`;
    const query = this.dataSource
      .createQueryBuilder()
      .select('p.name', 'name')
      .from(matches, 's')
      .innerJoin(PackageEntity, 'p', 'p.id = s.package_id')
      .setParameters(parameters)
      .orderBy('s.whole_name', 'DESC')
      .addOrderBy('p.total_downloads', 'DESC')
      .addOrderBy(this.binary('p.name_lower'), 'ASC')
      .limit(limit);
    searchable(query, caller);
    const rows = await query.getRawMany<{ name: string }>();
    return rows.map((row) => row.name);
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
      filtered(repository.createQueryBuilder('p')).getCount(),
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

  private async ranked(caller: Caller, request: SearchRequest, parsed: ParsedQuery): Promise<SearchPage> {
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
    const packages = await this.dataSource.getRepository(PackageEntity).findBy({ id: In(ids) });
    const publishers = await this.publishers.findByIds(packages.map((pkg) => pkg.publisherId));
    const byId = new Map(packages.map((pkg) => [pkg.id, pkg]));
    return ids.flatMap((id) => {
      const pkg = byId.get(id);
      if (!pkg) return []; // deleted between the two queries
      const publisher = publishers.get(pkg.publisherId) ?? null;
      return [{ pkg, publisher, verified: publisher?.verificationStatus === 'verified' }];
    });
  }

  /** Code point order on both engines (MySQL's default collation would order `_` and `-` differently). */
  private binary(expression: string): string {
    return this.mysql ? `${expression} COLLATE utf8mb4_bin` : expression;
  }
}

/** What search may show: what the caller can list, except unlisted packages, which are found by name only (even by their owner). */
function searchable<T extends object>(query: SelectQueryBuilder<T>, caller: Caller): SelectQueryBuilder<T> {
  return whereVisibleTo(query, 'p', caller, { listing: true }).andWhere("p.visibility <> 'unlisted'");
}
