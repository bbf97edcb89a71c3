import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { PageQuery } from '../../common/pagination.js';
import { PACKAGE_TYPES, type PackageType } from '../registry/index.js';
import { QUERY_MAX_LENGTH } from './search-terms.js';

export const SUGGEST_DEFAULT_LIMIT = 5;
export const SUGGEST_MAX_LIMIT = 20;

export class SearchQuery extends PageQuery {
  // The length is checked by the service so that an over-long query is a 422, as documented.
  @ApiPropertyOptional({
    description: `Search text; any characters are accepted (operators and quotes are plain text). Empty lists every visible package by downloads. At most ${QUERY_MAX_LENGTH} characters (longer: 422).`,
    maxLength: QUERY_MAX_LENGTH,
    example: 'cloud sync',
  })
  @IsOptional()
  @IsString()
  q: string = '';

  @ApiPropertyOptional({ enum: PACKAGE_TYPES })
  @IsOptional()
  @IsIn(PACKAGE_TYPES)
  package_type?: PackageType;
}

export class SuggestQuery {
  @ApiPropertyOptional({
    description: `Prefix of a package name (or of a word in it); at most ${QUERY_MAX_LENGTH} characters`,
    maxLength: QUERY_MAX_LENGTH,
    example: 'sea',
  })
  @IsOptional()
  @IsString()
  q: string = '';

  @ApiPropertyOptional({ minimum: 1, maximum: SUGGEST_MAX_LIMIT, default: SUGGEST_DEFAULT_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SUGGEST_MAX_LIMIT)
  limit: number = SUGGEST_DEFAULT_LIMIT;
}
