import { Injectable } from '@nestjs/common';
import { DataSource, In, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import { offsetOf } from '../../common/pagination.js';
import { SqlDialect } from '../../database/sql-dialect.js';
import type { Caller } from './caller.js';
import { PackageVersionEntity } from './entities/package-version.entity.js';
import { PackageEntity, type PackageType, type Visibility } from './entities/package.entity.js';
import { PublisherEntity } from './entities/publisher.entity.js';
import { whereVisible } from './package-visibility.js';

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
   * `missingCondition` (SQL over `p`, e.g. NOT EXISTS in the index) holds; every package when it is null.
   */
  indexablePackages(afterId: string, limit: number, missingCondition: string | null): Promise<PackageEntity[]> {
    const packages = this.dataSource
      .createQueryBuilder(PackageEntity, 'p')
      .select([
        'p.id',
        'p.name',
        'p.displayName',
        'p.description',
        'p.keywords',
        'p.visibility',
        'p.packageType',
        'p.totalDownloads',
        'p.publisherId',
      ])
      .where('p.id > :after', { after: afterId });
    if (missingCondition !== null) packages.andWhere(missingCondition);
    return packages.orderBy('p.id', 'ASC').take(limit).getMany();
  }

  /** Which of these package ids exist (asked 500 at a time, within every database's parameter limit). */
  async existingPackageIds(ids: string[]): Promise<Set<string>> {
    const existing = new Set<string>();
    for (let start = 0; start < ids.length; start += 500) {
      const chunk = ids.slice(start, start + 500);
      const rows: Array<{ id: string }> = await this.dataSource.query(
        `SELECT id FROM packages WHERE id IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      for (const row of rows) existing.add(row.id);
    }
    return existing;
  }

  /** Which of these publishers are verified (inside the caller's transaction, when given). */
  async verifiedPublisherIds(manager: EntityManager | null, publisherIds: string[]): Promise<Set<string>> {
    if (publisherIds.length === 0) return new Set();
    const rows: Array<{ id: string }> = await (manager ?? this.dataSource).query(
      `SELECT id FROM publishers WHERE verification_status = 'verified' AND id IN (${publisherIds.map(() => '?').join(', ')})`,
      publisherIds,
    );
    return new Set(rows.map((row) => row.id));
  }

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
