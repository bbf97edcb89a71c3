import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, MaxLength, ValidateNested } from 'class-validator';
import { IsOmittable } from '../../common/dto-fields.js';

/** Enough for any real install; bounds the work one request can ask for. */
export const MAX_ROOT_REQUIREMENTS = 500;

export class PackageRequirementDto {
  @ApiProperty({ example: 'CloudM' })
  @IsString()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({
    example: '^1.0.0',
    description: 'Version range (npm semver, comma sets, ==pins); empty or absent: any',
  })
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  version?: string;
}

export class ResolveRequestDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_ROOT_REQUIREMENTS,
    example: ['CloudM>=2.0.0', 'lib^1.2', 'x==1.0.0', 'y', 'z>=1.0,<2.0'],
    description: 'Requirement strings: name plus range (npm semver syntax, comma-separated sets, == pins)',
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_ROOT_REQUIREMENTS)
  @IsString({ each: true })
  @MaxLength(1000, { each: true })
  requirements?: string[];

  @ApiPropertyOptional({ type: [PackageRequirementDto], maxItems: MAX_ROOT_REQUIREMENTS })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_ROOT_REQUIREMENTS)
  @ValidateNested({ each: true })
  @Type(() => PackageRequirementDto)
  packages?: PackageRequirementDto[];

  @ApiPropertyOptional({
    example: '1.5.0',
    description: 'Host (ToolBox) version; versions whose toolbox_version range excludes it are skipped',
  })
  @IsOmittable()
  @IsString()
  @MaxLength(100)
  toolbox_version?: string;
}

export class CheckCompatibilityDto {
  @ApiProperty({ example: 'CloudM' })
  @IsString()
  @MaxLength(100)
  package: string;

  @ApiPropertyOptional({ example: '1.2.0', description: 'Default: the latest version' })
  @IsOmittable()
  @IsString()
  @MaxLength(100)
  version?: string;

  @ApiPropertyOptional({
    example: '1.5.0',
    description: 'Host (ToolBox) version; absent: only the dependencies are checked',
  })
  @IsOmittable()
  @IsString()
  @MaxLength(100)
  toolbox_version?: string;
}
