import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { PageQuery } from '../../common/pagination.js';
import { PACKAGE_TYPES, VISIBILITIES, type PackageType, type Visibility } from './entities/package.entity.js';
import { IsOmittable, OptionalHttpUrl } from '../../common/dto-fields.js';

/** Package and publisher names: 1–100 of letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const NAME_MESSAGE = 'must be 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit';

export class RegisterPublisherDto {
  @ApiProperty({ example: 'toolbox-team' })
  @IsString()
  @Matches(NAME_PATTERN, { message: `name ${NAME_MESSAGE}` })
  name: string;

  @ApiPropertyOptional({ example: 'ToolBox Team' })
  @IsOmittable()
  @IsString()
  @MaxLength(200)
  display_name?: string;

  @ApiPropertyOptional({ example: 'team@example.com' })
  @IsOmittable()
  @IsString()
  @Matches(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: 'email must be an e-mail address' })
  @MaxLength(320)
  email?: string;

  @OptionalHttpUrl('homepage', 'https://example.com')
  homepage?: string;
}

class PackageFieldsDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOmittable()
  @IsString()
  @MaxLength(200)
  display_name?: string;

  @ApiPropertyOptional({ maxLength: 5000 })
  @IsOmittable()
  @IsString()
  @MaxLength(5000)
  description?: string;

  @ApiPropertyOptional({ enum: VISIBILITIES, default: 'public' })
  @IsOmittable()
  @IsIn(VISIBILITIES)
  visibility?: Visibility;

  @OptionalHttpUrl('homepage', 'https://example.com')
  homepage?: string;

  @OptionalHttpUrl('repository', 'https://github.com/example/project')
  repository?: string;

  @ApiPropertyOptional({ example: 'MIT' })
  @IsOmittable()
  @IsString()
  @MaxLength(100)
  license?: string;

  @ApiPropertyOptional({ type: [String], maxItems: 20 })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(50, { each: true })
  keywords?: string[];

  @ApiPropertyOptional({ description: 'Markdown', maxLength: 200000 })
  @IsOmittable()
  @IsString()
  @MaxLength(200_000)
  readme?: string;
}

export class CreatePackageDto extends PackageFieldsDto {
  @ApiProperty({ example: 'CloudM' })
  @IsString()
  @Matches(NAME_PATTERN, { message: `name ${NAME_MESSAGE}` })
  name: string;

  @ApiPropertyOptional({ enum: PACKAGE_TYPES, default: 'mod' })
  @IsOmittable()
  @IsIn(PACKAGE_TYPES)
  package_type?: PackageType;

  /** Multipart creation only: the first version's number and changelog. */
  @ApiPropertyOptional({ description: 'multipart creation: version of the attached file' })
  @IsOmittable()
  @IsString()
  @MaxLength(100)
  version?: string;

  @ApiPropertyOptional({ description: 'multipart creation: changelog of the attached file' })
  @IsOmittable()
  @IsString()
  @MaxLength(100_000)
  changelog?: string;
}

export class UpdatePackageDto extends PackageFieldsDto {}

export class YankDto {
  @ApiPropertyOptional({ example: 'security issue' })
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  reason?: string;
}

export class ListPackagesQuery extends PageQuery {
  @ApiPropertyOptional({ enum: PACKAGE_TYPES })
  @IsOmittable()
  @IsIn(PACKAGE_TYPES)
  package_type?: PackageType;

  @ApiPropertyOptional({ description: 'publisher name' })
  @IsOmittable()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  publisher?: string;
}
