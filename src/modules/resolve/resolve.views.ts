import type { CompatibilityDto, ResolutionDto, ResolvedPackageDto } from './resolve.responses.js';
import type { Compatibility, Resolution } from './resolve.service.js';

/** The resolution result; `errors` repeats `conflicts` for the existing client, `checksum` is the SHA-256. */
export function resolutionView(resolution: Resolution): ResolutionDto {
  const resolved: Record<string, ResolvedPackageDto> = {};
  for (const entry of resolution.resolved) {
    resolved[entry.name] = {
      name: entry.name,
      version: entry.version,
      download_url: entry.downloadUrl,
      checksum: entry.checksumSha256,
      checksum_sha256: entry.checksumSha256,
      dependencies: entry.dependencies,
    };
  }
  return {
    success: resolution.success,
    resolved,
    conflicts: resolution.conflicts,
    warnings: resolution.warnings,
    errors: resolution.conflicts,
  };
}

export function compatibilityView(result: Compatibility): CompatibilityDto {
  return {
    compatible: result.compatible,
    reason: result.reason,
    package: result.packageName,
    version: result.version,
    toolbox_version: result.toolboxVersion,
    requires_toolbox: result.requiresToolbox,
    dependencies: result.dependencies,
    warnings: result.warnings,
    conflicts: result.conflicts,
  };
}
