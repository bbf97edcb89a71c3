import { Injectable } from '@nestjs/common';
import { DataSource, In, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import { offsetOf } from '../../common/pagination.js';
import { SqlDialect } from '../../database/sql-dialect.js';
import type { Caller } from './caller.js';
import { PackageVersionEntity } from './entities/package-version.entity.js';
import { PackageEntity, type PackageType, type Visibility } from './entities/package.entity.js';
import { PublisherEntity } from './entities/publisher.entity.js';
import { whereVisible } from './package-visibility.js';

/** What search ranks a package by (snake_case: read with raw SQL, the hot path). */
export interface PackageRankingRow {
  id: string;
  name: string;
  name_lower: string;
  visibility: string;
  publisher_id: string;
  total_downloads: string | number;
  verified: string | number;
  /** Read for ranking only. */
  display_name?: string | null;
  description?: string | null;
  /** JSON text, as stored. */
  keywords?: string | null;
}

/** One package with one of its versions (or none: the version columns are then empty). */
export interface PackageVersionRow {
  id: string;
  name: string;
  nameLower: string;
  visibility: Visibility;
  publisherId: string;
  packageId: string | null;
  version: string;
  yanked: number | boolean | string;
  yankReason: string | null;
  toolboxVersion: string | null;
  dependencies: string | null;
  checksumSha256: string;
  storageKey: string;
}

/** A package's latest version and whether that version is yanked. */
export interface LatestVersionRow {
  name: string;
  nameLower: string;
  visibility: Visibility;
  publisherId: string;
  latestVersion: string | null;
  yanked: number | boolean | string | null;
}

/**
 * The registry's named reads of `packages`, `publishers` and `package_versions` for the modules that
 * discover and install packages (Search, Resolve): they call these instead of writing SQL over the
 * registry's tables. The statements are those the discovery benchmark (bench/discovery.ts) was
 * tuned with; keep their text when changing them, or measure again. Who sees what is decided by
 * package-visibility.ts; the `visibility = 'public'` conditions here are the anonymous part of that
 * rule, written out so the planners can use the visibility indexes.
 */
@Injectable()
export class PackageCatalogRepository {
  private readonly dialect: SqlDialect;

  constructor(private readonly dataSource: DataSource) {
    this.dialect = SqlDialect.of(dataSource);
  }

  // Search

  /** What ranking needs of each package (with its searchable text for `withText`), by primary key. */
  rankingRows(ids: string[], withText = false): Promise<PackageRankingRow[]> {
    return this.dataSource.query(
      // The publisher's verification joined in, rather than read in a second round trip.
      `SELECT p.id, p.name, p.name_lower, p.visibility, p.publisher_id, p.total_downloads,
              ${withText ? 'p.display_name, p.description, p.keywords,' : ''}
              CASE WHEN pub.verification_status = 'verified' THEN 1 ELSE 0 END AS verified
       FROM packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id WHERE p.id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
  }

  /** The id of the package named exactly so (lower-cased), whatever its visibility. */
  idsNamed(nameLower: string): Promise<Array<{ id: string }>> {
    return this.dataSource.query(`SELECT id FROM packages WHERE name_lower = ?`, [nameLower]);
  }

  /**
   * Ids of public packages whose lower-cased name is in [prefix, end), most downloaded first. The
   * planners guess between the name and the popularity index without knowing the prefix's density:
   * for a prefix held by at least `denseAt` packages the popularity order reaches the limit early,
   * for a sparser one the name range is small.
   */
  async popularPublicIdsNamedFrom(prefix: string, end: string, limit: number, denseAt: number): Promise<string[]> {
    const [{ packages }] = (await this.dataSource.query(
      `SELECT COUNT(*) AS packages FROM (SELECT 1 AS one FROM packages WHERE name_lower >= ? AND name_lower < ? LIMIT ${denseAt}) named`,
      [prefix, end],
    )) as Array<{ packages: string | number }>;
    const chosen = Number(packages) < denseAt ? 'uq_packages_name_lower' : 'ix_packages_visible_popularity';
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM packages ${this.dialect.useIndex(chosen)} WHERE visibility = 'public' AND name_lower >= ? AND name_lower < ?
       ORDER BY total_downloads DESC, name_lower DESC, id DESC LIMIT ?`,
      [prefix, end, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * A sub-select for a UNION of candidate reads: public packages (as `p`) whose `key` (an expression
   * over p's columns) is in [?, ?), walked in popularity order, limited to ? rows, selecting `columns`.
   */
  popularPublicByKeySql(key: string, columns: string): string {
    return `SELECT ${columns}
               FROM packages p ${this.dialect.useIndex('ix_packages_visible_popularity')}
               WHERE p.visibility = 'public' AND ${this.dialect.binary(key)} >= ? AND ${this.dialect.binary(key)} < ?
               ORDER BY p.total_downloads DESC, p.name_lower DESC, p.id DESC LIMIT ?`;
  }

  /** Up to `limit` ids of the publisher's private packages. */
  async privateIdsOf(publisherId: string, limit: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `SELECT id FROM packages WHERE publisher_id = ? AND visibility = 'private' LIMIT ?`,
      [publisherId, limit],
    );
    return rows.map((row) => row.id);
  }

  /**
   * A join for a UNION of package ids (the `t` rows of `table` whose package is one of the publisher's
   * private packages); the caller adds its conditions on `t`.
   */
  privateOfPublisherJoinSql(table: string): string {
    return `SELECT t.package_id FROM packages p INNER JOIN ${table} t ON t.package_id = p.id
         WHERE p.publisher_id = ? AND p.visibility = 'private'`;
  }

  /** One page of the packages search lists for an empty query, most downloaded first. */
  async popularSearchableIds(
    caller: Caller,
    packageType: PackageType | undefined,
    page: number,
    perPage: number,
  ): Promise<string[]> {
    const query = this.dataSource.getRepository(PackageEntity).createQueryBuilder('p').select('p.id', 'id');
    whereVisible(query, 'p', caller, 'search');
    if (packageType) query.andWhere('p.package_type = :packageType', { packageType });
    const rows = await query
      .orderBy('p.total_downloads', 'DESC')
      // The (total_downloads, id) index serves this order without sorting every package.
      .addOrderBy('p.id', 'DESC')
      .offset(offsetOf(page, perPage))
      .limit(perPage)
      .getRawMany<{ id: string }>();
    return rows.map((row) => row.id);
  }

  countPublic(packageType: PackageType | undefined): Promise<number> {
    return this.ofType(
      this.dataSource.getRepository(PackageEntity).createQueryBuilder('p').where("p.visibility = 'public'"),
      packageType,
    ).getCount();
  }

  countPrivateOf(publisherId: string, packageType: PackageType | undefined): Promise<number> {
    return this.ofType(
      this.dataSource
        .getRepository(PackageEntity)
        .createQueryBuilder('p')
        .where("p.publisher_id = :publisherId AND p.visibility = 'private'", { publisherId }),
      packageType,
    ).getCount();
  }

  /**
   * The packages (as `p`, their publishers as `pub` when `withPublisher`) that search may show the
   * caller among `matches` (a sub-select of `package_id`s, as `m`); the caller selects and orders.
   */
  searchableMatches(
    matches: string,
    parameters: Record<string, string | number>,
    caller: Caller,
    packageType: PackageType | undefined,
    { withPublisher = true } = {},
  ) {
    const query = this.dataSource
      .createQueryBuilder()
      .from(matches, 'm')
      .innerJoin(PackageEntity, 'p', 'p.id = m.package_id');
    if (withPublisher) query.leftJoin(PublisherEntity, 'pub', 'pub.id = p.publisher_id');
    query.setParameters(parameters);
    whereVisible(query, 'p', caller, 'search');
    return this.ofType(query, packageType);
  }

  /** Full package rows and their publishers, for a page of ids (both reads at once). */
  async packagesWithPublishers(ids: string[]): Promise<{ packages: PackageEntity[]; publishers: PublisherEntity[] }> {
    const [packages, publishers] = await Promise.all([
      this.dataSource.getRepository(PackageEntity).findBy({ id: In(ids) }),
      // The publishers are found through the packages' publisher ids in SQL.
      this.dataSource
        .getRepository(PublisherEntity)
        .createQueryBuilder('pub')
        .where('pub.id IN (SELECT hp.publisher_id FROM packages hp WHERE hp.id IN (:...ids))', { ids })
        .getMany(),
    ]);
    return { packages, publishers };
  }

  // Search index

  /**
   * Up to `limit` packages after `afterId` in id order, with the fields the index writes, for which
   * `missingCondition` (SQL over `p`, e.g. NOT EXISTS in the index) holds.
   */
  indexablePackages(afterId: string, limit: number, missingCondition: string): Promise<PackageEntity[]> {
    return this.dataSource
      .createQueryBuilder(PackageEntity, 'p')
      .select([
        'p.id',
        'p.name',
        'p.displayName',
        'p.description',
        'p.keywords',
        'p.visibility',
        'p.totalDownloads',
        'p.publisherId',
      ])
      .where('p.id > :after', { after: afterId })
      .andWhere(missingCondition)
      .orderBy('p.id', 'ASC')
      .take(limit)
      .getMany();
  }

  /** Which of these publishers are verified (inside the caller's transaction). */
  async verifiedPublisherIds(manager: EntityManager, publisherIds: string[]): Promise<Set<string>> {
    if (publisherIds.length === 0) return new Set();
    const rows: Array<{ id: string }> = await manager.query(
      `SELECT id FROM publishers WHERE verification_status = 'verified' AND id IN (${publisherIds.map(() => '?').join(', ')})`,
      publisherIds,
    );
    return new Set(rows.map((row) => row.id));
  }

  /** A sub-select of the ids of one publisher's packages (one `?`: the publisher id). */
  readonly packageIdsOfPublisherSql = 'SELECT id FROM packages WHERE publisher_id = ?';

  // Resolve and update checks

  /** The packages by lower-cased name, each with all its versions, in one query. */
  packagesWithVersions(namesLower: string[]): Promise<PackageVersionRow[]> {
    return this.dataSource
      .getRepository(PackageEntity)
      .createQueryBuilder('p')
      .leftJoin(PackageVersionEntity, 'v', 'v.package_id = p.id')
      .select('p.id', 'id')
      .addSelect('p.name', 'name')
      .addSelect('p.name_lower', 'nameLower')
      .addSelect('p.visibility', 'visibility')
      .addSelect('p.publisher_id', 'publisherId')
      .addSelect('v.package_id', 'packageId')
      .addSelect('v.version', 'version')
      .addSelect('v.yanked', 'yanked')
      .addSelect('v.yank_reason', 'yankReason')
      .addSelect('v.toolbox_version', 'toolboxVersion')
      .addSelect('v.dependencies', 'dependencies')
      .addSelect('v.checksum_sha256', 'checksumSha256')
      .addSelect('v.storage_key', 'storageKey')
      .where('p.name_lower IN (:...names)', { names: namesLower })
      .getRawMany<PackageVersionRow>();
  }

  /**
   * The latest version (and whether it is yanked) of packages by lower-cased name, whatever their
   * visibility: the name index must drive this query, and a visibility condition tempts a planner
   * without statistics to scan by visibility instead (callers filter with isVisible).
   */
  latestByNames(namesLower: string[]): Promise<Array<Omit<LatestVersionRow, 'name'>>> {
    // One plain statement: expanding 1,000 named parameters through the query builder cost more than the query.
    // Only columns of ix_packages_name_latest and ix_package_versions_yanked: both sides are read from those indexes alone.
    return this.dataSource.query(
      `SELECT p.name_lower AS nameLower, p.latest_version AS latestVersion, p.visibility AS visibility,
              p.publisher_id AS publisherId, v.yanked AS yanked
       FROM packages p LEFT JOIN package_versions v ${this.versionIndexHint()} ON v.package_id = p.id AND v.version = p.latest_version
       WHERE p.name_lower IN (${namesLower.map(() => '?').join(', ')})`,
      namesLower,
    );
  }

  /** One page, in name order, of the latest versions of every package the caller can list, and how many there are. */
  async latestListed(
    caller: Caller,
    page: number,
    perPage: number,
  ): Promise<{ rows: LatestVersionRow[]; total: number }> {
    const counted = whereVisible(
      this.dataSource.getRepository(PackageEntity).createQueryBuilder('p'),
      'p',
      caller,
      'list',
    );
    const listed = whereVisible(this.latestQuery(), 'p', caller, 'list')
      .orderBy('p.name_lower', 'ASC')
      .offset(offsetOf(page, perPage))
      .limit(perPage);
    const [total, rows] = await Promise.all([counted.getCount(), listed.getRawMany<LatestVersionRow>()]);
    return { rows, total };
  }

  /**
   * The planners prefer the unique (package_id, version) index, which then visits each version row
   * for `yanked`; the covering index answers from the index alone (a cold buffer pool reads far fewer pages).
   */
  private versionIndexHint(): string {
    return this.dialect.useIndex('ix_package_versions_yanked');
  }

  private latestQuery(): SelectQueryBuilder<PackageEntity> {
    return this.dataSource
      .getRepository(PackageEntity)
      .createQueryBuilder('p')
      .select('p.name', 'name')
      .addSelect('p.name_lower', 'nameLower')
      .addSelect('p.latest_version', 'latestVersion')
      .addSelect('p.visibility', 'visibility')
      .addSelect('p.publisher_id', 'publisherId')
      .addSelect('v.yanked', 'yanked')
      .leftJoin(PackageVersionEntity, 'v', 'v.package_id = p.id AND v.version = p.latest_version');
  }

  private ofType<T extends object>(
    query: SelectQueryBuilder<T>,
    packageType: PackageType | undefined,
  ): SelectQueryBuilder<T> {
    return packageType ? query.andWhere('p.package_type = :packageType', { packageType }) : query;
  }
}
