import type { PackageVersionEntity } from './entities/package-version.entity.js';
import type { PackageEntity } from './entities/package.entity.js';
import type { PublisherEntity } from './entities/publisher.entity.js';
import type { PublisherStats } from './publishers.service.js';
import type { Caller } from './caller.js';
import type { PublisherSummary } from './registry-shapes.js';
import type {
  CurrentUserDto,
  DownloadTicketDto,
  PackageDetailDto,
  PackageListDto,
  PackageListItemDto,
  PublisherDto,
  PublisherRefDto,
  RegisteredPublisherDto,
  UploadedVersionDto,
  VersionDetailDto,
  VersionDto,
} from './registry.responses.js';
import type { DownloadTicket } from './package-versions.service.js';

/** The DTO layer: the one place that maps entities (camelCase) to the wire names (registry.responses.ts). */
export function publisherRef(publisher: PublisherSummary | undefined | null): PublisherRefDto | null {
  return publisher
    ? {
        name: publisher.name,
        display_name: publisher.displayName,
        verified: publisher.verificationStatus === 'verified',
      }
    : null;
}

export function publisherView(publisher: PublisherEntity, stats?: PublisherStats): PublisherDto {
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

export function registeredPublisherView(publisher: PublisherEntity): RegisteredPublisherDto {
  const { created_at: _createdAt, ...view } = publisherView(publisher);
  return view;
}

export function currentUserView(
  user: NonNullable<Caller['user']>,
  caller: Pick<Caller, 'isAdmin'>,
  publisher: PublisherEntity | null,
): CurrentUserDto {
  return {
    id: user.id,
    platform_user_id: user.platformUserId,
    email: user.email,
    username: user.username,
    is_admin: caller.isAdmin,
    publisher_id: publisher?.id ?? null,
    is_verified: publisher?.verificationStatus === 'verified',
  };
}

export function packageListItem(pkg: PackageEntity, publisher?: PublisherEntity | null): PackageListItemDto {
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

export function versionView(version: PackageVersionEntity): VersionDto {
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

export function packageDetail(
  pkg: PackageEntity,
  publisher: PublisherEntity | null,
  versions: PackageVersionEntity[],
): PackageDetailDto {
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

export function packageListView(
  items: { pkg: PackageEntity; publisher: PublisherEntity | null }[],
  total: number,
  page: number,
  perPage: number,
): PackageListDto {
  return {
    packages: items.map(({ pkg, publisher }) => packageListItem(pkg, publisher)),
    total,
    page,
    per_page: perPage,
  };
}

export function versionDetailView(
  pkg: Pick<PackageEntity, 'name'>,
  version: PackageVersionEntity,
  downloadUrl: string,
): VersionDetailDto {
  return { package: pkg.name, ...versionView(version), download_url: downloadUrl };
}

export function uploadedVersionView(
  pkg: Pick<PackageEntity, 'name'>,
  version: PackageVersionEntity,
  downloadUrl: string,
): UploadedVersionDto {
  return {
    status: 'uploaded',
    package: pkg.name,
    version: version.version,
    size: version.sizeBytes,
    checksum_sha256: version.checksumSha256,
    published_at: version.publishedAt.toISOString(),
    download_url: downloadUrl,
  };
}

export function downloadTicketView(ticket: DownloadTicket): DownloadTicketDto {
  return {
    url: ticket.url,
    expires_in: ticket.expiresIn,
    size: ticket.size,
    checksum_sha256: ticket.checksumSha256,
    filename: ticket.filename,
    yanked: ticket.yanked,
  };
}
