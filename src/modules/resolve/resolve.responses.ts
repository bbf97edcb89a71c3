import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';

/** Response bodies of dependency resolution; mapped in resolve.views.ts. */

export class ResolvedPackageDto {
  @ApiProperty({ type: String, example: 'CloudM' })
  name: string;

  @ApiProperty({ type: String, example: '2.1.0' })
  version: string;

  @ApiProperty({ type: String, description: 'Signed, time-limited URL of the version file' })
  download_url: string;

  @ApiProperty({ type: String, description: 'SHA-256 of the file' })
  checksum: string;

  @ApiProperty({ type: String, description: 'Repeats checksum' })
  checksum_sha256: string;

  @ApiProperty({ type: [String], example: ['lib^1.2'] })
  dependencies: string[];
}

@ApiExtraModels(ResolvedPackageDto)
export class ResolutionDto {
  @ApiProperty({ type: Boolean, description: 'false (still 200) when no set of versions satisfies every requirement' })
  success: boolean;

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(ResolvedPackageDto) },
    description: 'Package name → chosen version, in the order the resolver decided them',
  })
  resolved: Record<string, ResolvedPackageDto>;

  @ApiProperty({ type: [String], description: 'Each conflict with the chain that caused it' })
  conflicts: string[];

  @ApiProperty({ type: [String] })
  warnings: string[];

  @ApiProperty({ type: [String], description: 'Repeats conflicts for the existing client' })
  errors: string[];
}

export class CompatibilityDto {
  @ApiProperty({ type: Boolean })
  compatible: boolean;

  @ApiProperty({ type: String, nullable: true, example: 'CloudM 2.1.0 requires toolbox >=2.0.0, not 1.5.0' })
  reason: string | null;

  @ApiProperty({ type: String, example: 'CloudM' })
  package: string;

  @ApiProperty({ type: String, example: '2.1.0' })
  version: string;

  @ApiProperty({ type: String, nullable: true, example: '1.5.0' })
  toolbox_version: string | null;

  @ApiProperty({ type: String, nullable: true, example: '>=2.0.0' })
  requires_toolbox: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'name → version that would be installed alongside (empty when incompatible)',
  })
  dependencies: Record<string, string>;

  @ApiProperty({ type: [String] })
  warnings: string[];

  @ApiProperty({ type: [String] })
  conflicts: string[];
}
