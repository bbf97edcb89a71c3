import type { DataSource } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { canRead, type Caller } from '../registry/caller.js';
import { PackageVersionEntity } from '../registry/entities/package-version.entity.js';
import { PackageEntity } from '../registry/entities/package.entity.js';
import { isValidPackageName, parseRequirement, type Requirement } from './requirement.js';
import type { CandidateVersion, PackageCatalog } from './resolve-dependencies.js';

/** What the resolve service needs back about a chosen version. */
export interface VersionPayload {
  packageName: string;
  storageKey: string;
  checksumSha256: string;
}

interface KnownPackage {
  id: string;
  name: string;
}

interface VersionRow {
  packageId: string;
  version: string;
  yanked: number | boolean | string;
  yankReason: string | null;
  toolboxVersion: string | null;
  dependencies: string | null;
  checksumSha256: string;
  storageKey: string;
}

interface Pending {
  name: string;
  settle: (versions: readonly CandidateVersion[] | undefined) => void;
  fail: (error: unknown) => void;
}

// Bounds one IN (…) list; a wave of the resolver rarely names more packages than this.
const NAMES_PER_QUERY = 500;

/**
 * The resolver's view of the registry for one caller: versions of the packages that caller may
 * read. Requests made while the resolver explores one wave of dependencies are answered together
 * (one query for the packages, one for their versions), so a graph of 200 packages costs a handful
 * of round trips rather than 200.
 *
 * Names are matched case-insensitively and rewritten to the stored spelling, here and in every
 * dependency handed to the resolver, so `cloudm` and `CloudM` are one package to it and its
 * messages name packages as their publishers do.
 */
export class VisibleVersionCatalog implements PackageCatalog {
  /** Lower-cased name → the readable package, or null when unknown or not readable. */
  private readonly known = new Map<string, KnownPackage | null>();
  private readonly namesById = new Map<string, string>();
  private readonly parsed = new Map<string, Requirement | string>();
  private pending: Pending[] = [];
  private flushScheduled = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly caller: Caller,
  ) {}

  versions(name: string): Promise<readonly CandidateVersion[] | undefined> {
    return new Promise((settle, fail) => {
      this.pending.push({ name, settle, fail });
      if (this.flushScheduled) return;
      this.flushScheduled = true;
      // setImmediate, not a microtask: the resolver names a decision's dependencies across several
      // promise turns, and one batch should take them all.
      setImmediate(() => void this.flush());
    });
  }

  /** The readable package by any spelling of its name, or null. */
  async find(name: string): Promise<KnownPackage | null> {
    await this.learn([name]);
    return this.known.get(name.toLowerCase()) ?? null;
  }

  /** Requirements with package names in their stored spelling (unknown names are left as written). */
  async canonical(requirements: readonly Requirement[]): Promise<Requirement[]> {
    await this.learn(requirements.map((requirement) => requirement.name));
    return requirements.map((requirement) => this.respell(requirement));
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    try {
      await this.learn(batch.map((request) => request.name));
      const packageIds = [...new Set(batch.map((request) => this.known.get(request.name.toLowerCase())?.id).filter((id): id is string => id !== undefined))];
      const rows = await this.versionRows(packageIds);
      await this.learn(rows.flatMap((row) => this.dependencyNames(row)));
      const byPackage = new Map<string, CandidateVersion[]>();
      for (const row of rows) {
        const list = byPackage.get(row.packageId) ?? [];
        list.push(this.candidate(row));
        byPackage.set(row.packageId, list);
      }
      for (const request of batch) {
        const pkg = this.known.get(request.name.toLowerCase());
        request.settle(pkg ? (byPackage.get(pkg.id) ?? []) : undefined);
      }
    } catch (error) {
      for (const request of batch) request.fail(error);
    }
  }

  /** Looks up the names not seen yet, in as few queries as the IN-list bound allows. */
  private async learn(names: readonly string[]): Promise<void> {
    const missing = [...new Set(names.map((name) => name.toLowerCase()))].filter((name) => !this.known.has(name));
    const valid = missing.filter(isValidPackageName);
    for (const name of missing) if (!isValidPackageName(name)) this.known.set(name, null);
    for (let start = 0; start < valid.length; start += NAMES_PER_QUERY) {
      const chunk = valid.slice(start, start + NAMES_PER_QUERY);
      const query = this.dataSource
        .getRepository(PackageEntity)
        .createQueryBuilder('p')
        .select('p.id', 'id')
        .addSelect('p.name', 'name')
        .addSelect('p.name_lower', 'nameLower')
        .addSelect('p.visibility', 'visibility')
        .addSelect('p.publisher_id', 'publisherId')
        .where('p.name_lower IN (:...chunk)', { chunk });
      const rows = await query.getRawMany<KnownPackage & Pick<PackageEntity, 'nameLower' | 'visibility' | 'publisherId'>>();
      for (const name of chunk) this.known.set(name, null);
      // Installing by name is reading (canRead): unlisted packages count for signed-in callers, as for
      // downloads. Checked here so that the name index alone drives the query.
      for (const row of rows.filter((candidate) => canRead(this.caller, candidate))) {
        this.known.set(row.nameLower, { id: row.id, name: row.name });
        this.namesById.set(row.id, row.name);
      }
    }
  }

  private async versionRows(packageIds: string[]): Promise<VersionRow[]> {
    const rows: VersionRow[] = [];
    for (let start = 0; start < packageIds.length; start += NAMES_PER_QUERY) {
      const chunk = packageIds.slice(start, start + NAMES_PER_QUERY);
      rows.push(
        ...(await this.dataSource
          .getRepository(PackageVersionEntity)
          .createQueryBuilder('v')
          .select('v.package_id', 'packageId')
          .addSelect('v.version', 'version')
          .addSelect('v.yanked', 'yanked')
          .addSelect('v.yank_reason', 'yankReason')
          .addSelect('v.toolbox_version', 'toolboxVersion')
          .addSelect('v.dependencies', 'dependencies')
          .addSelect('v.checksum_sha256', 'checksumSha256')
          .addSelect('v.storage_key', 'storageKey')
          .where('v.package_id IN (:...chunk)', { chunk })
          .getRawMany<VersionRow>()),
      );
    }
    return rows;
  }

  private candidate(row: VersionRow): CandidateVersion {
    const payload: VersionPayload = { packageName: this.namesById.get(row.packageId) ?? '', storageKey: row.storageKey, checksumSha256: row.checksumSha256 };
    return {
      version: row.version,
      yanked: row.yanked === true || Number(row.yanked) === 1,
      yankReason: row.yankReason,
      toolboxVersion: row.toolboxVersion,
      dependencies: storedDependencies(row).map((dependency) => {
        const requirement = this.parse(dependency);
        // An unparseable dependency stays a string: the resolver reports it against this version.
        return typeof requirement === 'string' ? dependency : this.respell(requirement);
      }),
      payload,
    };
  }

  private dependencyNames(row: VersionRow): string[] {
    return storedDependencies(row).flatMap((dependency) => {
      const requirement = this.parse(dependency);
      return typeof requirement === 'string' ? [] : [requirement.name];
    });
  }

  private parse(dependency: string): Requirement | string {
    let parsed = this.parsed.get(dependency);
    if (parsed === undefined) {
      try {
        parsed = parseRequirement(dependency);
      } catch (error) {
        if (!(error instanceof PlatformError)) throw error;
        parsed = error.message;
      }
      this.parsed.set(dependency, parsed);
    }
    return parsed;
  }

  private respell(requirement: Requirement): Requirement {
    const stored = this.known.get(requirement.name.toLowerCase())?.name;
    return stored && stored !== requirement.name ? { ...requirement, name: stored } : requirement;
  }
}

function storedDependencies(row: VersionRow): string[] {
  if (!row.dependencies) return [];
  try {
    const parsed: unknown = JSON.parse(row.dependencies);
    return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}
