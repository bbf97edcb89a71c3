import { Injectable } from '@nestjs/common';
import semver from 'semver';
import { PlatformError } from '../../common/errors.js';
import {
  normalizeHostVersion,
  parseRequirement,
  satisfiesHost,
  type RequirementInput,
} from '../../packaging/requirement.js';
import { type Caller, PackageCatalogRepository, PackageVersionsService, pickLatestVersion } from '../registry/index.js';
import { resolveDependencies } from './resolve-dependencies.js';
import { VisibleVersionCatalog, type VersionPayload } from './visible-version-catalog.js';

export interface ResolvedEntry {
  name: string;
  version: string;
  downloadUrl: string;
  checksumSha256: string;
  dependencies: string[];
}

export interface Resolution {
  success: boolean;
  /** Keyed by the package's stored name, in the order the resolver decided them. */
  resolved: ResolvedEntry[];
  conflicts: string[];
  warnings: string[];
}

export interface CompatibilityRequest {
  packageName: string;
  version?: string;
  toolboxVersion?: string;
}

export interface Compatibility {
  compatible: boolean;
  reason: string | null;
  packageName: string;
  version: string;
  toolboxVersion: string | null;
  requiresToolbox: string | null;
  /** name → version that would be installed alongside (empty when incompatible). */
  dependencies: Record<string, string>;
  warnings: string[];
  conflicts: string[];
}

/** Wires the pure resolver to the registry: candidates are the versions the caller may read. */
@Injectable()
export class ResolveService {
  constructor(
    private readonly catalog: PackageCatalogRepository,
    private readonly versions: PackageVersionsService,
  ) {}

  /** Throws BAD_REQUEST naming a malformed requirement or host version before anything is read. */
  async resolve(
    caller: Caller,
    inputs: readonly RequirementInput[],
    toolboxVersion: string | undefined,
    baseUrl: string,
  ): Promise<Resolution> {
    if (inputs.length === 0)
      throw new PlatformError('BAD_REQUEST', 'Give at least one requirement in "requirements" or "packages"');
    const roots = inputs.map((input) => parseRequirement(input));
    const hostVersion = toolboxVersion === undefined ? undefined : normalizeHostVersion(toolboxVersion);
    const catalog = new VisibleVersionCatalog(this.catalog, caller);
    const outcome = await resolveDependencies(await catalog.canonical(roots), catalog, { hostVersion });
    const resolved = [...outcome.resolved.values()].map((entry) => {
      const payload = entry.payload as VersionPayload;
      return {
        name: entry.name,
        version: entry.version,
        downloadUrl: this.versions.signedUrl(payload.storageKey, baseUrl, payload.visibility),
        checksumSha256: payload.checksumSha256,
        dependencies: entry.dependencies,
      };
    });
    return { success: outcome.success, resolved, conflicts: outcome.conflicts, warnings: outcome.warnings };
  }

  /** Whether one version (default: the latest), with its dependencies, installs on the host version. */
  async check(caller: Caller, request: CompatibilityRequest): Promise<Compatibility> {
    const hostVersion =
      request.toolboxVersion === undefined || request.toolboxVersion.trim() === ''
        ? undefined
        : normalizeHostVersion(request.toolboxVersion);
    const catalog = new VisibleVersionCatalog(this.catalog, caller);
    const pkg = await catalog.find(request.packageName.trim());
    if (!pkg) throw new PlatformError('NOT_FOUND', `Package "${request.packageName}" not found`);
    const candidates = (await catalog.versions(pkg.name)) ?? [];
    const wanted = request.version?.trim()
      ? (semver.valid(request.version.trim()) ?? request.version.trim())
      : pickLatestVersion([...candidates]);
    const chosen = candidates.find((candidate) => candidate.version === wanted);
    if (!chosen || wanted === null) {
      throw new PlatformError(
        'NOT_FOUND',
        wanted ? `Version ${wanted} of "${pkg.name}" not found` : `"${pkg.name}" has no versions`,
      );
    }
    const base = {
      packageName: pkg.name,
      version: chosen.version,
      toolboxVersion: hostVersion ?? null,
      requiresToolbox: chosen.toolboxVersion,
    };
    if (hostVersion !== undefined && !satisfiesHost(chosen.toolboxVersion, hostVersion)) {
      const reason = `${pkg.name} ${chosen.version} requires toolbox ${chosen.toolboxVersion}, not ${hostVersion}`;
      return { ...base, compatible: false, reason, dependencies: {}, warnings: [], conflicts: [reason] };
    }
    const outcome = await resolveDependencies([parseRequirement(`${pkg.name}==${chosen.version}`)], catalog, {
      hostVersion,
    });
    const dependencies: Record<string, string> = {};
    for (const entry of outcome.resolved.values())
      if (entry.name !== pkg.name) dependencies[entry.name] = entry.version;
    return {
      ...base,
      compatible: outcome.success,
      reason: outcome.success ? null : (outcome.conflicts[0] ?? 'not installable'),
      dependencies,
      warnings: outcome.warnings,
      conflicts: outcome.conflicts,
    };
  }
}
