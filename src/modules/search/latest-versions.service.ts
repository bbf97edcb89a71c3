import { Injectable } from '@nestjs/common';
import { isValidPackageName } from '../../packaging/requirement.js';
import { type Caller, isVisible, type LatestVersionRow, PackageCatalogRepository } from '../registry/index.js';

export const LATEST_VERSIONS_MAX_NAMES = 1000;

/** name → latest installable version; null when the package has no version that is not yanked. */
export type LatestVersions = Record<string, string | null>;

/**
 * Update checks: the latest version of many packages in one query. `latest_version` already skips
 * yanked versions while any other exists; when every version is yanked it still names one, which is
 * reported as null here (a yanked version is never offered as an update).
 */
@Injectable()
export class LatestVersionsService {
  constructor(private readonly catalog: PackageCatalogRepository) {}

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
    // Visibility is checked on the rows read (see latestByNames).
    const rows = await this.catalog.latestByNames(lowered);
    // Anyone who may read a package by name may ask for its version: unlisted counts for signed-in callers.
    const byLower = new Map(
      rows.filter((row) => isVisible(caller, row)).map((row) => [row.nameLower, installable(row)]),
    );
    for (const name of requested) {
      const lower = name.toLowerCase();
      if (byLower.has(lower)) result[name] = byLower.get(lower)!;
    }
    return result;
  }

  /** Every package the caller can list (unlisted ones are not enumerated), keyed by stored name, in name order. */
  async all(caller: Caller, page: number, perPage: number): Promise<{ versions: LatestVersions; total: number }> {
    const { rows, total } = await this.catalog.latestListed(caller, page, perPage);
    const versions: LatestVersions = {};
    for (const row of rows) versions[row.name] = installable(row);
    return { versions, total };
  }
}

function installable(row: Pick<LatestVersionRow, 'latestVersion' | 'yanked'>): string | null {
  if (row.latestVersion === null) return null;
  const yanked = row.yanked === true || Number(row.yanked) === 1;
  return yanked ? null : row.latestVersion;
}
