import { ApiProperty, OmitType } from '@nestjs/swagger';
import { PageFieldsDto } from '../../common/pagination.js';
import { PublisherRefDto } from '../registry/index.js';
import {
  ARCHITECTURES,
  ARTIFACT_TYPES,
  PLATFORMS,
  type Architecture,
  type ArtifactType,
  type Platform,
} from './artifact-vocabulary.js';

/** Response bodies of artifacts; mapped in artifacts.views.ts. */

export class ArtifactListItemDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, example: 'toolbox-desktop' })
  name: string;

  @ApiProperty({ enum: ARTIFACT_TYPES })
  artifact_type: ArtifactType;

  @ApiProperty({ type: String })
  description: string;

  @ApiProperty({ type: String, nullable: true })
  homepage: string | null;

  @ApiProperty({ type: String, nullable: true })
  repository: string | null;

  @ApiProperty({ type: () => PublisherRefDto, nullable: true })
  publisher: PublisherRefDto | null;

  @ApiProperty({ type: String, nullable: true, example: '1.4.0', description: 'Highest version with a build' })
  latest_version: string | null;

  @ApiProperty({ type: Number })
  total_downloads: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at: string;
}

export class ArtifactListDto extends PageFieldsDto {
  @ApiProperty({ type: () => [ArtifactListItemDto] })
  artifacts: ArtifactListItemDto[];
}

export class BuildDto {
  @ApiProperty({ enum: PLATFORMS })
  platform: Platform;

  @ApiProperty({ enum: ARCHITECTURES })
  architecture: Architecture;

  @ApiProperty({ type: String, example: 'app-setup.msi' })
  filename: string;

  @ApiProperty({ type: Number })
  size_bytes: number;

  @ApiProperty({ type: String })
  checksum_sha256: string;

  @ApiProperty({ type: String, nullable: true, example: 'msi' })
  installer_type: string | null;

  @ApiProperty({ type: Number })
  downloads: number;
}

/** The build of the latest-build view carries no download count. */
export class LatestBuildFileDto extends OmitType(BuildDto, ['downloads'] as const) {}

export class ArtifactVersionDto {
  @ApiProperty({ type: String, example: '1.4.0' })
  version: string;

  @ApiProperty({ type: String, format: 'date-time' })
  released_at: string;

  @ApiProperty({ type: String })
  changelog: string;

  @ApiProperty({ type: String, nullable: true })
  min_os_version: string | null;

  @ApiProperty({ type: () => [BuildDto] })
  builds: BuildDto[];
}

export class ArtifactDetailDto extends ArtifactListItemDto {
  @ApiProperty({ type: () => [ArtifactVersionDto] })
  versions: ArtifactVersionDto[];
}

/** The answer to a build upload: the version with all its builds, and the new build. */
export class UploadedBuildDto extends ArtifactVersionDto {
  @ApiProperty({ type: String, example: 'toolbox-desktop' })
  artifact: string;

  @ApiProperty({ type: String, nullable: true })
  latest_version: string | null;

  @ApiProperty({ type: () => BuildDto })
  build: BuildDto;

  @ApiProperty({ type: String, description: 'Signed, time-limited URL of the build' })
  download_url: string;
}

export class LatestBuildDto extends OmitType(ArtifactVersionDto, ['builds'] as const) {
  @ApiProperty({ type: String, example: 'toolbox-desktop' })
  artifact: string;

  @ApiProperty({ type: () => LatestBuildFileDto })
  build: LatestBuildFileDto;
}

export class BuildDownloadTicketDto {
  @ApiProperty({ type: String, example: 'http://127.0.0.1:4025/api/v1/files/artifacts/…?expires=…&signature=…' })
  url: string;

  @ApiProperty({ type: Number, example: 600, description: 'seconds' })
  expires_in: number;

  @ApiProperty({ type: String })
  filename: string;

  @ApiProperty({ type: Number })
  size_bytes: number;

  @ApiProperty({ type: String })
  checksum_sha256: string;

  @ApiProperty({ enum: PLATFORMS })
  platform: Platform;

  @ApiProperty({ enum: ARCHITECTURES })
  architecture: Architecture;
}
