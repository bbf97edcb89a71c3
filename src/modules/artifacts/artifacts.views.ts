import { type PublisherSummary, publisherRef } from '../registry/index.js';
import type { ArtifactBuildEntity } from './entities/artifact-build.entity.js';
import type { ArtifactVersionEntity } from './entities/artifact-version.entity.js';
import type { ArtifactEntity } from './entities/artifact.entity.js';
import type {
  ArtifactDetailDto,
  ArtifactListDto,
  ArtifactListItemDto,
  ArtifactVersionDto,
  BuildDownloadTicketDto,
  BuildDto,
  LatestBuildDto,
  UploadedBuildDto,
} from './artifacts.responses.js';

export interface VersionWithBuilds {
  version: ArtifactVersionEntity;
  builds: ArtifactBuildEntity[];
}

export function artifactListItem(artifact: ArtifactEntity, publisher: PublisherSummary | null): ArtifactListItemDto {
  return {
    id: artifact.id,
    name: artifact.name,
    artifact_type: artifact.artifactType,
    description: artifact.description ?? '',
    homepage: artifact.homepage,
    repository: artifact.repository,
    publisher: publisherRef(publisher),
    latest_version: artifact.latestVersion,
    total_downloads: artifact.totalDownloads,
    created_at: artifact.createdAt.toISOString(),
    updated_at: artifact.updatedAt.toISOString(),
  };
}

export function buildView(build: ArtifactBuildEntity): BuildDto {
  return {
    platform: build.platform,
    architecture: build.architecture,
    filename: build.filename,
    size_bytes: build.sizeBytes,
    checksum_sha256: build.checksumSha256,
    installer_type: build.installerType,
    downloads: build.downloads,
  };
}

export function artifactVersionView({ version, builds }: VersionWithBuilds): ArtifactVersionDto {
  return {
    version: version.version,
    released_at: version.releasedAt.toISOString(),
    changelog: version.changelog ?? '',
    min_os_version: version.minOsVersion,
    builds: builds.map(buildView),
  };
}

export function artifactDetail(
  artifact: ArtifactEntity,
  publisher: PublisherSummary | null,
  versions: VersionWithBuilds[],
): ArtifactDetailDto {
  return { ...artifactListItem(artifact, publisher), versions: versions.map(artifactVersionView) };
}

/** The latest-build view: the newest build per platform. */
export function latestBuildView(
  artifact: ArtifactEntity,
  version: ArtifactVersionEntity,
  build: ArtifactBuildEntity,
): LatestBuildDto {
  return {
    artifact: artifact.name,
    version: version.version,
    released_at: version.releasedAt.toISOString(),
    changelog: version.changelog ?? '',
    min_os_version: version.minOsVersion,
    build: {
      platform: build.platform,
      architecture: build.architecture,
      filename: build.filename,
      size_bytes: build.sizeBytes,
      checksum_sha256: build.checksumSha256,
      installer_type: build.installerType,
    },
  };
}

export function artifactListView(
  items: { artifact: ArtifactEntity; publisher: PublisherSummary | null }[],
  total: number,
  page: number,
  perPage: number,
): ArtifactListDto {
  return {
    artifacts: items.map(({ artifact, publisher }) => artifactListItem(artifact, publisher)),
    total,
    page,
    per_page: perPage,
  };
}

export function uploadedBuildView(
  artifact: ArtifactEntity,
  version: VersionWithBuilds,
  build: ArtifactBuildEntity,
  downloadUrl: string,
): UploadedBuildDto {
  return {
    artifact: artifact.name,
    latest_version: artifact.latestVersion,
    ...artifactVersionView(version),
    build: buildView(build),
    download_url: downloadUrl,
  };
}

export function buildDownloadTicketView(
  build: ArtifactBuildEntity,
  url: string,
  expiresInSeconds: number,
): BuildDownloadTicketDto {
  return {
    url,
    expires_in: expiresInSeconds,
    filename: build.filename,
    size_bytes: build.sizeBytes,
    checksum_sha256: build.checksumSha256,
    platform: build.platform,
    architecture: build.architecture,
  };
}
