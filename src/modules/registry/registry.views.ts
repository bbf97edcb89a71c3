import type { PackageVersionEntity } from './entities/package-version.entity.js';
import type { PackageEntity } from './entities/package.entity.js';
import type { PublisherEntity } from './entities/publisher.entity.js';
import type { PublisherStats } from './publishers.service.js';

/** The DTO layer: the one place that maps entities (camelCase) to the seed's wire names. */
export function publisherRef(publisher: PublisherEntity | undefined | null) {
  return publisher
    ? { name: publisher.name, display_name: publisher.displayName, verified: publisher.verificationStatus === 'verified' }
    : null;
}

export function publisherView(publisher: PublisherEntity, stats?: PublisherStats) {
  return {
    id: publisher.id,
    name: publisher.name,
    display_name: publisher.displayName,
    verification_status: publisher.verificationStatus,
    email: publisher.email,
    homepage: publisher.homepage,
    ...(stats ? { package_count: stats.packageCount, total_downloads: stats.totalDownloads } : {}),
    created_at: publisher.createdAt.toISOString(),
  };
}

export function packageListItem(pkg: PackageEntity, publisher?: PublisherEntity | null) {
  return {
    name: pkg.name,
    display_name: pkg.displayName,
    package_type: pkg.packageType,
    description: pkg.description ?? '',
    latest_version: pkg.latestVersion,
    total_downloads: pkg.totalDownloads,
    downloads: pkg.totalDownloads,
    visibility: pkg.visibility,
    publisher: publisherRef(publisher),
    updated_at: pkg.updatedAt.toISOString(),
  };
}

export function versionView(version: PackageVersionEntity) {
  return {
    version: version.version,
    published_at: version.publishedAt.toISOString(),
    changelog: version.changelog ?? '',
    yanked: version.yanked,
    yank_reason: version.yankReason,
    downloads: version.downloads,
    size: version.sizeBytes,
    checksum_sha256: version.checksumSha256,
    toolbox_version: version.toolboxVersion,
    dependencies: version.dependencies ?? [],
  };
}

export function packageDetail(pkg: PackageEntity, publisher: PublisherEntity | null, versions: PackageVersionEntity[]) {
  return {
    ...packageListItem(pkg, publisher),
    homepage: pkg.homepage,
    repository: pkg.repository,
    license: pkg.license,
    keywords: pkg.keywords ?? [],
    readme: pkg.readme,
    created_at: pkg.createdAt.toISOString(),
    versions: versions.map(versionView),
  };
}

export function packageFileName(pkg: Pick<PackageEntity, 'name'>, version: Pick<PackageVersionEntity, 'version'>): string {
  return `${pkg.name}-${version.version}.zip`;
}
