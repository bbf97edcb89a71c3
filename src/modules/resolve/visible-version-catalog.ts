import { PlatformError } from '../../common/errors.js';
import { isValidPackageName, parseRequirement, type Requirement } from '../../packaging/requirement.js';
import { type Caller, isVisible, type PackageCatalogRepository, type PackageVersionRow } from '../registry/index.js';
import type { CandidateVersion, PackageCatalog } from './resolve-dependencies.js';

/** What the resolve service needs back about a chosen version. */
export interface VersionPayload {
  packageName: string;
  storageKey: string;
  checksumSha256: string;
  /** The package's visibility when resolved: its signed URL stops working once the package turns private. */
  visibility: string;
}

interface KnownPackage {
  id: string;
  name: string;
}

type VersionRow = PackageVersionRow & { packageId: string };

// Bounds one IN (…) list; a wave of the resolver rarely names more packages than this.
const NAMES_PER_QUERY = 500;
/**
 * Packages one catalog reads ahead of the resolver (the dependencies of what it read, wave after
 * wave). A dependency graph of a few hundred packages is then read in as many round trips as it is
 * deep; past this many, packages are read only when the resolver asks for them.
 */
const PREFETCH_LIMIT = 2_000;

/**
 * The resolver's view of the registry for one caller: versions of the packages that caller may
 * read. Packages are read by name together with their versions (one joined query per batch), and
 * each batch's dependencies are read at once as the next batch, before the resolver asks for them:
 * a graph of 200 packages six levels deep costs about seven round trips rather than 200. Requests
 * made while a batch is being gathered join it.
 *
 * Names are matched case-insensitively and rewritten to the stored spelling, here and in every
 * dependency handed to the resolver, so `cloudm` and `CloudM` are one package to it and its
 * messages name packages as their publishers do.
 */
export class VisibleVersionCatalog implements PackageCatalog {
  /** Lower-cased name → the readable package, or null when unknown or not readable. */
  private readonly known = new Map<string, KnownPackage | null>();
  private readonly namesById = new Map<string, string>();
  private readonly rowsByPackage = new Map<string, VersionRow[]>();
  private readonly parsed = new Map<string, Requirement | string>();
  /** Lower-cased name → its read (done or under way). */
  private readonly reads = new Map<string, Promise<void>>();
  private pending: Array<{ name: string; settle: () => void; fail: (error: unknown) => void }> = [];
  private flushScheduled = false;

  constructor(
    private readonly catalog: PackageCatalogRepository,
    private readonly caller: Caller,
  ) {}

  async versions(name: string): Promise<readonly CandidateVersion[] | undefined> {
    await this.read([name]);
    const pkg = this.known.get(name.toLowerCase());
    if (!pkg) return undefined;
    const rows = this.rowsByPackage.get(pkg.id) ?? [];
    // Dependencies are handed over in their stored spelling, so they must be known first (usually read ahead already).
    await this.read(rows.flatMap((row) => this.dependencyNames(row)));
    return rows.map((row) => this.candidate(row));
  }

  /** The readable package by any spelling of its name, or null. */
  async find(name: string): Promise<KnownPackage | null> {
    await this.read([name]);
    return this.known.get(name.toLowerCase()) ?? null;
  }

  /** Requirements with package names in their stored spelling (unknown names are left as written). */
  async canonical(requirements: readonly Requirement[]): Promise<Requirement[]> {
    await this.read(requirements.map((requirement) => requirement.name));
    return requirements.map((requirement) => this.respell(requirement));
  }

  /** Reads the named packages and their versions, joining the batch being gathered. */
  private read(names: readonly string[]): Promise<void> {
    const waits: Array<Promise<void>> = [];
    for (const name of new Set(names.map((each) => each.toLowerCase()))) {
      let read = this.reads.get(name);
      if (!read) {
        if (!isValidPackageName(name)) {
          this.known.set(name, null);
          read = Promise.resolve();
        } else {
          read = new Promise<void>((settle, fail) => this.pending.push({ name, settle, fail }));
          // A read ahead that fails is reported to whoever asks for that package, not as an unhandled rejection.
          read.catch(() => undefined);
          this.scheduleFlush();
        }
        this.reads.set(name, read);
      }
      waits.push(read);
    }
    return Promise.all(waits).then(() => undefined);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: the resolver names a decision's dependencies across several
    // promise turns, and one batch should take them all.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.flushScheduled = false;
    try {
      const names = batch.map((request) => request.name);
      const ids: string[] = [];
      for (let start = 0; start < names.length; start += NAMES_PER_QUERY)
        ids.push(...(await this.readChunk(names.slice(start, start + NAMES_PER_QUERY))));
      for (const request of batch) request.settle();
      // Read ahead: the dependencies of every version just read, as the next batch.
      if (this.reads.size < PREFETCH_LIMIT) {
        const next = ids.flatMap((id) =>
          (this.rowsByPackage.get(id) ?? []).flatMap((row) => this.dependencyNames(row)),
        );
        void this.read(next.slice(0, PREFETCH_LIMIT - this.reads.size)).catch(() => undefined);
      }
    } catch (error) {
      for (const request of batch) request.fail(error);
    }
  }

  /** One query: the packages by lower-cased name, each with all its versions. Returns the readable packages' ids. */
  private async readChunk(names: string[]): Promise<string[]> {
    const rows = await this.catalog.packagesWithVersions(names);
    for (const name of names) this.known.set(name, null);
    const readable = new Set<string>();
    for (const row of rows) {
      // Installing by name is reading: unlisted packages count for signed-in callers, as for downloads.
      if (!readable.has(row.id)) {
        if (!isVisible(this.caller, row, 'read')) continue;
        readable.add(row.id);
        this.known.set(row.nameLower, { id: row.id, name: row.name });
        this.namesById.set(row.id, row.name);
        this.rowsByPackage.set(row.id, []);
      }
      // A package without versions comes back once, with the version columns empty.
      if (row.packageId) this.rowsByPackage.get(row.id)!.push(row as VersionRow);
    }
    return [...readable];
  }

  private candidate(row: VersionRow): CandidateVersion {
    const payload: VersionPayload = {
      packageName: this.namesById.get(row.packageId) ?? '',
      storageKey: row.storageKey,
      checksumSha256: row.checksumSha256,
      visibility: row.visibility,
    };
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
