import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PageQuery } from '../../common/pagination.js';
import { NAME_PATTERN } from '../registry/index.js';
import {
  ACCEPTED_ARTIFACT_TYPES,
  ARCHITECTURES,
  ARTIFACT_TYPES,
  PLATFORMS,
  type Architecture,
  type Platform,
} from './artifact-vocabulary.js';
import { OptionalHttpUrl } from '../../common/dto-fields.js';

export class CreateArtifactDto {
  @ApiProperty({ example: 'toolbox-desktop' })
  @IsString()
  @Matches(NAME_PATTERN, {
    message: 'name must be 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit',
  })
  name: string;

  @ApiProperty({ enum: ARTIFACT_TYPES, description: '`tauri_app` is accepted as an alias of desktop_app' })
  @IsIn(ACCEPTED_ARTIFACT_TYPES, { message: `artifact_type must be one of: ${ARTIFACT_TYPES.join(', ')}` })
  artifact_type: string;

  @ApiPropertyOptional({ maxLength: 5000 })
  @IsOptional()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @OptionalHttpUrl('homepage', 'https://example.com')
  homepage?: string;

  @OptionalHttpUrl('repository', 'https://github.com/example/app')
  repository?: string;
}

export class ListArtifactsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: ARTIFACT_TYPES })
  @IsOptional()
  @IsIn(ACCEPTED_ARTIFACT_TYPES)
  artifact_type?: string;

  @ApiPropertyOptional({ description: 'publisher name or id' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  publisher?: string;
}

/** Which build: both optional; exact values are preferred over builds for `all`. */
export class BuildQuery {
  @ApiPropertyOptional({ enum: PLATFORMS })
  @IsOptional()
  @IsIn(PLATFORMS)
  platform?: Platform;

  @ApiPropertyOptional({ enum: ARCHITECTURES })
  @IsOptional()
  @IsIn(ARCHITECTURES)
  architecture?: Architecture;
}

export const UPLOAD_BUILD_BODY = {
  schema: {
    type: 'object',
    required: ['file', 'version'],
    properties: {
      file: { type: 'string', format: 'binary', description: 'The build (any binary: installer, executable, archive)' },
      version: { type: 'string', example: '1.4.0', description: 'semantic version' },
      platform: { type: 'string', enum: [...PLATFORMS], default: 'all' },
      architecture: { type: 'string', enum: [...ARCHITECTURES], default: 'all' },
      changelog: { type: 'string', description: "kept from the version's first build unless that one had none" },
      installer_type: { type: 'string', example: 'msi' },
      min_os_version: { type: 'string', example: '10.0.19041' },
    },
  },
};
