import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { PageFieldsDto } from '../../common/pagination.js';
import { PACKAGE_TYPES, VISIBILITIES, type PackageType, type Visibility } from './entities/package.entity.js';
import { VERIFICATION_STATUSES, type VerificationStatus } from './entities/publisher.entity.js';

/**
 * Response bodies of the registry, with the wire names clients read. Each class is the one description of its
 * body: the mappers in registry.views.ts return these types (so a field cannot be added or dropped
 * without the compiler noticing), and Swagger documents them from the same decorators.
 */

/** The short publisher shown on a package or artifact. */
export class PublisherRefDto {
  @ApiProperty({ type: String, example: 'toolbox-team' })
  name: string;

  @ApiProperty({ type: String, example: 'ToolBox Team' })
  display_name: string;

  @ApiProperty({ type: Boolean })
  verified: boolean;
}

export class PublisherDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, example: 'toolbox-team' })
  name: string;

  @ApiProperty({ type: String, example: 'ToolBox Team' })
  display_name: string;

  @ApiProperty({ enum: VERIFICATION_STATUSES })
  verification_status: VerificationStatus;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Shown to admins and the publisher itself only' })
  email?: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://example.com' })
  homepage: string | null;

  @ApiPropertyOptional({ type: Number, description: 'Packages the caller may see' })
  package_count?: number;

  @ApiPropertyOptional({ type: Number, description: 'Downloads of the packages the caller may see' })
  total_downloads?: number;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

/** The answer of `POST /api/v1/auth/register-publisher`. */
export class RegisteredPublisherDto extends OmitType(PublisherDto, [
  'package_count',
  'total_downloads',
  'created_at',
] as const) {}

export class CurrentUserDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, example: '42', description: "The platform's user id (the token's subject)" })
  platform_user_id: string;

  @ApiProperty({ type: String, nullable: true, example: 'ada@example.com' })
  email: string | null;

  @ApiProperty({ type: String, example: 'ada' })
  username: string;

  @ApiProperty({ type: Boolean })
  is_admin: boolean;

  @ApiProperty({ type: String, nullable: true, format: 'uuid' })
  publisher_id: string | null;

  @ApiProperty({ type: Boolean, description: 'Whether the publisher is verified' })
  is_verified: boolean;
}

export class PackageListItemDto {
  @ApiProperty({ type: String, example: 'CloudM' })
  name: string;

  @ApiProperty({ type: String, example: 'Cloud M' })
  display_name: string;

  @ApiProperty({ enum: PACKAGE_TYPES })
  package_type: PackageType;

  @ApiProperty({ type: String, example: 'Cloud storage for ToolBox' })
  description: string;

  @ApiProperty({ type: String, nullable: true, example: '1.2.0' })
  latest_version: string | null;

  @ApiProperty({ type: Number })
  total_downloads: number;

  @ApiProperty({ type: Number, description: 'Repeats total_downloads for the existing client' })
  downloads: number;

  @ApiProperty({ enum: VISIBILITIES })
  visibility: Visibility;

  @ApiProperty({ type: () => PublisherRefDto, nullable: true })
  publisher: PublisherRefDto | null;

  @ApiProperty({ type: String, format: 'date-time' })
  updated_at: string;
}

export class PackageListDto extends PageFieldsDto {
  @ApiProperty({ type: () => [PackageListItemDto] })
  packages: PackageListItemDto[];
}

export class VersionDto {
  @ApiProperty({ type: String, example: '1.2.0' })
  version: string;

  @ApiProperty({ type: String, format: 'date-time' })
  published_at: string;

  @ApiProperty({ type: String })
  changelog: string;

  @ApiProperty({ type: Boolean })
  yanked: boolean;

  @ApiProperty({ type: String, nullable: true })
  yank_reason: string | null;

  @ApiProperty({ type: Number })
  downloads: number;

  @ApiProperty({ type: Number, description: 'bytes' })
  size: number;

  @ApiProperty({ type: String, example: '3b1e9a0c4d2f…' })
  checksum_sha256: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '>=0.1.0 <1',
    description: 'semver range of supported host versions',
  })
  toolbox_version: string | null;

  @ApiProperty({ type: [String], example: ['lib>=1.2.0'] })
  dependencies: string[];
}

/** `GET /api/v1/packages/{name}/versions/{version}` with `Accept: application/json`. */
export class VersionDetailDto extends VersionDto {
  @ApiProperty({ type: String, example: 'CloudM' })
  package: string;

  @ApiProperty({ type: String, description: 'Signed, time-limited URL of the file' })
  download_url: string;
}

export class PackageDetailDto extends PackageListItemDto {
  @ApiProperty({ type: String, nullable: true })
  homepage: string | null;

  @ApiProperty({ type: String, nullable: true })
  repository: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'MIT' })
  license: string | null;

  @ApiProperty({ type: [String] })
  keywords: string[];

  @ApiProperty({ type: String, nullable: true, description: 'Markdown' })
  readme: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: () => [VersionDto], description: 'Newest first' })
  versions: VersionDto[];
}

export class UploadedVersionDto {
  @ApiProperty({ type: String, enum: ['uploaded'] })
  status: 'uploaded';

  @ApiProperty({ type: String, example: 'CloudM' })
  package: string;

  @ApiProperty({ type: String, example: '1.2.0' })
  version: string;

  @ApiProperty({ type: Number, description: 'bytes' })
  size: number;

  @ApiProperty({ type: String })
  checksum_sha256: string;

  @ApiProperty({ type: String, format: 'date-time' })
  published_at: string;

  @ApiProperty({ type: String, description: 'Signed, time-limited URL of the file' })
  download_url: string;
}

export class DownloadTicketDto {
  @ApiProperty({ type: String, example: 'http://127.0.0.1:4025/api/v1/files/…?expires=…&signature=…' })
  url: string;

  @ApiProperty({ type: Number, example: 600, description: 'seconds' })
  expires_in: number;

  @ApiProperty({ type: Number, description: 'bytes' })
  size: number;

  @ApiProperty({ type: String })
  checksum_sha256: string;

  @ApiProperty({ type: String, example: 'CloudM-1.2.0.zip' })
  filename: string;

  @ApiProperty({ type: Boolean })
  yanked: boolean;
}
