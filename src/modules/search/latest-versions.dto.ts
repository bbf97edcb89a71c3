import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { MAX_PAGE } from '../../common/pagination.js';
import { LATEST_VERSIONS_MAX_NAMES } from './latest-versions.service.js';

/** `names=a&names=b`, `names=a,b` or both mixed: one flat list. */
function splitNames({ value }: { value: unknown }): unknown {
  if (value === undefined || value === null) return undefined;
  const values = Array.isArray(value) ? value : [value];
  if (!values.every((item) => typeof item === 'string')) return value;
  return (values as string[])
    .flatMap((item) => item.split(','))
    .map((item) => item.trim())
    .filter(Boolean);
}

class VersionsPaging {
  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_PAGE,
    default: 1,
    description: 'With no names: the page of all visible packages',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: LATEST_VERSIONS_MAX_NAMES,
    default: 100,
    description: 'With no names: packages per page',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(LATEST_VERSIONS_MAX_NAMES)
  per_page: number = 100;
}

export class LatestVersionsQuery extends VersionsPaging {
  @ApiPropertyOptional({
    type: [String],
    description: `Package names, repeatable (names=a&names=b) or comma-separated; at most ${LATEST_VERSIONS_MAX_NAMES} (more: 400). None: every visible package, paged.`,
    maxItems: LATEST_VERSIONS_MAX_NAMES,
  })
  @IsOptional()
  @Transform(splitNames)
  @IsArray()
  @ArrayMaxSize(LATEST_VERSIONS_MAX_NAMES)
  @IsString({ each: true })
  names?: string[];
}

export class LatestVersionsBody extends VersionsPaging {
  @ApiProperty({
    type: [String],
    maxItems: LATEST_VERSIONS_MAX_NAMES,
    example: ['CloudM', 'lib'],
    description: `At most ${LATEST_VERSIONS_MAX_NAMES} names (more: 422); empty: every visible package, paged`,
  })
  @IsArray()
  @ArrayMaxSize(LATEST_VERSIONS_MAX_NAMES)
  @IsString({ each: true })
  names: string[];
}
