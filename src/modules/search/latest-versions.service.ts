import { Injectable } from '@nestjs/common';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { offsetOf } from '../../common/pagination.js';
import { SqlDialect } from '../../database/sql-dialect.js';
import type { Caller } from '../registry/caller.js';
import { PackageVersionEntity } from '../registry/entities/package-version.entity.js';
import { PackageEntity } from '../registry/entities/package.entity.js';
import { isVisible, whereVisible } from '../registry/package-visibility.js';
import { isValidPackageName } from '../resolve/requirement.js';

export const LATEST_VERSIONS_MAX_NAMES = 1000;

/** name → latest installable version; null when the package has no version that is not yanked. */
export type LatestVersions = Record<string, string | null>;

interface LatestRow {
  name: string;
  nameLower: string;
  visibility: PackageEntity['visibility'];
  publisherId: string;
  latestVersion: string | null;
  yanked: number | boolean | string | null;
}

/**
 * Update checks: the latest version of many packages in one query. `latest_version` already skips
 * yanked versions while any other exists; when every version is yanked it still names one, which is
 * reported as null here (a yanked version is never offered as an update).
 */
@Injectable()
export class LatestVersionsService {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Keyed by each name as requested (clients look their answer up by the name they sent); names are
   * matched case-insensitively. Unknown names, names the caller may not read, and names that are
   * not package names at all are absent.
   */
  async forNames(caller: Caller, names: readonly string[]): Promise<LatestVersions> {
    const requested = [...new Set(names.map((name) => name.trim()).filter(isValidPackageName))];
    const result: LatestVersions = {};
    if (requested.length === 0) return result;
    const lowered = [...new Set(requested.map((name) => name.toLowerCase()))];
    // Visibility is checked here rather than in SQL: the name index must drive this query, and a
    // visibility condition tempts a planner without statistics to scan by visibility instead.
    // One plain statement: expanding 1,000 named parameters through the query builder cost more than the query.
    // Only columns of ix_packages_name_latest and ix_package_versions_yanked: both sides are read from those indexes alone.
    const rows: Array<Omit<LatestRow, 'name'>> = await this.dataSource.query(
      `SELECT p.name_lower AS nameLower, p.latest_version AS latestVersion, p.visibility AS visibility,
              p.publisher_id AS publisherId, v.yanked AS yanked
       FROM packages p LEFT JOIN package_versions v ${this.versionIndexHint()} ON v.package_id = p.id AND v.version = p.latest_version
       WHERE p.name_lower IN (${lowered.map(() => '?').join(', ')})`,
      lowered,
    );
    // Anyone who may read a package by name may ask for its version: unlisted counts for signed-in callers.
    const byLower = new Map(rows.filter((row) => isVisible(caller, row)).map((row) => [row.nameLower, installable(row)]));
    for (const name of requested) {
      const lower = name.toLowerCase();
      if (byLower.has(lower)) result[name] = byLower.get(lower)!;
    }
    return result;
  }

  /** Every package the caller can list (unlisted ones are not enumerated), keyed by stored name, in name order. */
  async all(caller: Caller, page: number, perPage: number): Promise<{ versions: LatestVersions; total: number }> {
    const counted = whereVisible(this.dataSource.getRepository(PackageEntity).createQueryBuilder('p'), 'p', caller, 'list');
    const listed = whereVisible(this.latestQuery(), 'p', caller, 'list')
      .orderBy('p.name_lower', 'ASC')
      .offset(offsetOf(page, perPage))
      .limit(perPage);
    const [total, rows] = await Promise.all([counted.getCount(), listed.getRawMany<LatestRow>()]);
    const versions: LatestVersions = {};
    for (const row of rows) versions[row.name] = installable(row);
    return { versions, total };
  }

  /**
   * The planners prefer the unique (package_id, version) index, which then visits each version row
   * for `yanked`; the covering index answers from the index alone (a cold buffer pool reads far fewer pages).
   */
  private versionIndexHint(): string {
    return SqlDialect.of(this.dataSource).useIndex('ix_package_versions_yanked');
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
}

function installable(row: Pick<LatestRow, 'latestVersion' | 'yanked'>): string | null {
  if (row.latestVersion === null) return null;
  const yanked = row.yanked === true || Number(row.yanked) === 1;
  return yanked ? null : row.latestVersion;
}
