import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PlatformError } from '../../common/errors.js';
import type { CreateDiffRequest } from './diff.service.js';

/** Query strings carry booleans as text; JSON bodies as booleans. Anything else is left for @IsBoolean to refuse. */
function toBoolean({ value }: { value: unknown }): unknown {
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  return value;
}

/**
 * POST …/diff/create, as a JSON body or as query parameters (both forms are accepted; the body wins
 * field by field). Fields are optional here so either form validates alone; the controller checks
 * that the merged request names both versions.
 */
export class CreateDiffDto {
  @ApiPropertyOptional({ example: '1.0.0', description: 'required (in the body or the query)' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  from_version?: string;

  @ApiPropertyOptional({ example: '1.1.0', description: 'required (in the body or the query)' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  to_version?: string;

  @ApiPropertyOptional({ default: false, description: 'rebuild even when the delta exists' })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  force?: boolean;
}

/** Merges the two forms of POST …/diff/create; both versions are required in one of them. */
export function createDiffRequestOf(
  body: CreateDiffDto | undefined,
  query: CreateDiffDto | undefined,
): CreateDiffRequest {
  const fromVersion = body?.from_version ?? query?.from_version;
  const toVersion = body?.to_version ?? query?.to_version;
  const missing = [
    ...(fromVersion ? [] : [{ field: 'from_version', message: 'from_version is required' }]),
    ...(toVersion ? [] : [{ field: 'to_version', message: 'to_version is required' }]),
  ];
  if (missing.length > 0)
    throw new PlatformError('UNPROCESSABLE_ENTITY', missing.map((item) => item.message).join('; '), missing);
  return {
    fromVersion: fromVersion as string,
    toVersion: toVersion as string,
    force: body?.force ?? query?.force ?? false,
  };
}
