import type { PackageDeltaEntity } from './entities/package-delta.entity.js';
import type { DiffInfoDto, DiffPendingDto } from './diff.responses.js';

/** Above this share of the full file, a delta saves too little to be worth applying. */
export const RECOMMENDED_MAX_RATIO = 0.8;

export function compressionRatio(patchSize: number, fullSize: number): number {
  return fullSize > 0 ? patchSize / fullSize : 1;
}

export function diffPath(packageName: string, fromVersion: string, toVersion: string): string {
  return `/api/v1/packages/${encodeURIComponent(packageName)}/diff/${encodeURIComponent(fromVersion)}/${encodeURIComponent(toVersion)}`;
}

/** Diff info: the documented fields plus what a client needs to decide and to verify. */
export function diffInfoView(pkg: { name: string }, delta: PackageDeltaEntity, baseUrl: string): DiffInfoDto {
  const patchSize = delta.patchSize ?? 0;
  const fullSize = delta.fullSize ?? 0;
  const ratio = compressionRatio(patchSize, fullSize);
  return {
    status: 'ready',
    package_name: pkg.name,
    from_version: delta.fromVersion,
    to_version: delta.toVersion,
    format: delta.format,
    patch_size: patchSize,
    full_size: fullSize,
    compression_ratio: ratio,
    recommended: ratio <= RECOMMENDED_MAX_RATIO,
    patch_storage_path: delta.patchStoragePath,
    patch_checksum: delta.patchChecksum,
    changed_files: delta.changedFiles ?? 0,
    added_files: delta.addedFiles ?? 0,
    deleted_files: delta.deletedFiles ?? 0,
    kept_files: delta.keptFiles ?? 0,
    exact_rebuild: delta.exactRebuild ?? false,
    created_at: delta.createdAt.toISOString(),
    download_url: `${baseUrl}${diffPath(pkg.name, delta.fromVersion, delta.toVersion)}/download`,
  };
}

export function diffPendingView(
  pkg: { name: string },
  fromVersion: string,
  toVersion: string,
  jobId: string,
  baseUrl: string,
): DiffPendingDto {
  return {
    status: 'pending',
    job_id: jobId,
    package_name: pkg.name,
    from_version: fromVersion,
    to_version: toVersion,
    info_url: `${baseUrl}${diffPath(pkg.name, fromVersion, toVersion)}`,
  };
}

export function deltaFileName(
  pkg: { name: string },
  delta: Pick<PackageDeltaEntity, 'fromVersion' | 'toVersion'>,
): string {
  return `${pkg.name}-${delta.fromVersion}-to-${delta.toVersion}.tbdelta`;
}
