import { ApiProperty } from '@nestjs/swagger';

/** Response bodies of deltas (docs/delta-format.md); mapped in diff.views.ts. */

/** The version pair every delta answer names. */
class DiffPairDto {
  @ApiProperty({ type: String, example: 'CloudM' })
  package_name: string;

  @ApiProperty({ type: String, example: '1.0.0' })
  from_version: string;

  @ApiProperty({ type: String, example: '1.1.0' })
  to_version: string;
}

export class DiffInfoDto extends DiffPairDto {
  @ApiProperty({ type: String, enum: ['ready'] })
  status: 'ready';

  @ApiProperty({ type: String, nullable: true, example: 'tbdelta/1' })
  format: string | null;

  @ApiProperty({ type: Number, description: 'bytes' })
  patch_size: number;

  @ApiProperty({ type: Number, description: 'bytes of the full to_version file' })
  full_size: number;

  @ApiProperty({ type: Number, example: 0.0039, description: 'patch_size / full_size' })
  compression_ratio: number;

  @ApiProperty({
    type: Boolean,
    description: 'false when the patch is over 80 % of the full file: download the full version instead',
  })
  recommended: boolean;

  @ApiProperty({ type: String, nullable: true })
  patch_storage_path: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'SHA-256 of the patch' })
  patch_checksum: string | null;

  @ApiProperty({ type: Number })
  changed_files: number;

  @ApiProperty({ type: Number })
  added_files: number;

  @ApiProperty({ type: Number })
  deleted_files: number;

  @ApiProperty({ type: Number })
  kept_files: number;

  @ApiProperty({ type: Boolean, description: 'Applying the patch rebuilds the to_version ZIP byte for byte' })
  exact_rebuild: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: String, example: 'http://127.0.0.1:4025/api/v1/packages/CloudM/diff/1.0.0/1.1.0/download' })
  download_url: string;
}

export class DiffPendingDto extends DiffPairDto {
  @ApiProperty({ type: String, enum: ['pending'] })
  status: 'pending';

  @ApiProperty({ type: String, example: 'diff.generate:…' })
  job_id: string;

  @ApiProperty({ type: String, description: 'Ask here again (after Retry-After seconds)' })
  info_url: string;
}
