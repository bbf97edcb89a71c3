import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** The highest page a list answers: (page - 1) * per_page stays a small, exact integer for every database. */
export const MAX_PAGE = 1_000_000;

/** `page` from 1 to MAX_PAGE, `per_page` 1–100 (default 20), as the documented list operations define them. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  per_page: number = 20;
}

/** The paging fields every list response ends with (a list DTO extends this and adds its items). */
export class PageFieldsDto {
  @ApiProperty({ type: Number, description: 'Matches in all pages' })
  total: number;

  @ApiProperty({ type: Number })
  page: number;

  @ApiProperty({ type: Number })
  per_page: number;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
}

export function offsetOf(page: number, perPage: number): number {
  return (page - 1) * perPage;
}
