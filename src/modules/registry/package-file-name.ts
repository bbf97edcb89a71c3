import type { PackageVersionEntity } from './entities/package-version.entity.js';
import type { PackageEntity } from './entities/package.entity.js';

/** The file name a package version is downloaded as: the same for a redirect ticket and a direct download. */
export function packageFileName(
  pkg: Pick<PackageEntity, 'name'>,
  version: Pick<PackageVersionEntity, 'version'>,
): string {
  return `${pkg.name}-${version.version}.zip`;
}
