import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/** `page` from 1, `per_page` 1–100 (default 20), as the seed's list operations define them. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
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
