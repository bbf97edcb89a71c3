import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PackageListItemDto } from '../registry/index.js';

/** Response bodies of search and the batch latest-versions lookup; mapped in search.views.ts. */

export class SearchResultDto extends PackageListItemDto {
  @ApiProperty({ type: Boolean, description: 'The publisher is verified' })
  verified: boolean;
}

export class SearchResponseDto {
  @ApiProperty({ type: () => [SearchResultDto] })
  results: SearchResultDto[];

  @ApiProperty({ type: () => [SearchResultDto], description: 'Repeats results for the existing client' })
  packages: SearchResultDto[];

  @ApiProperty({ type: Number, description: 'Matches, counted up to 1,000 for broad queries' })
  total: number;

  @ApiProperty({ type: String, example: 'cloud' })
  query: string;

  @ApiProperty({ type: Number })
  page: number;

  @ApiProperty({ type: Number })
  per_page: number;
}

export class LatestVersionsDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', nullable: true },
    example: { CloudM: '1.2.0', 'new-lib': null },
    description:
      'Package name → latest installable version (null: none installable); unknown or invisible names are absent',
  })
  versions: Record<string, string | null>;

  @ApiPropertyOptional({ type: Number, description: 'With no names: visible packages in all' })
  total?: number;

  @ApiPropertyOptional({ type: Number, description: 'With no names' })
  page?: number;

  @ApiPropertyOptional({ type: Number, description: 'With no names' })
  per_page?: number;
}
