import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsObject, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQuery } from '../../common/pagination.js';
import { VERIFICATION_STATUSES, type VerificationStatus } from '../registry/index.js';
import { AUDIT_TARGET_TYPES, type AuditTargetType } from './entities/audit-entry.entity.js';
import { VERIFICATION_METHODS, type VerificationMethod } from './entities/verification-request.entity.js';

/** `true`/`1`/`yes` and `false`/`0`/`no`, as query strings arrive. */
const toBoolean = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const lowered = value.toLowerCase();
  if (['true', '1', 'yes'].includes(lowered)) return true;
  if (['false', '0', 'no', ''].includes(lowered)) return false;
  return value;
};

export class ListPublishersQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'only verified publishers', default: false })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  verified_only?: boolean;

  @ApiPropertyOptional({ enum: VERIFICATION_STATUSES })
  @IsOptional()
  @IsIn(VERIFICATION_STATUSES)
  status?: VerificationStatus;
}

export class SubmitVerificationDto {
  @ApiProperty({ enum: VERIFICATION_METHODS, example: 'github' })
  @IsIn(VERIFICATION_METHODS)
  method: VerificationMethod;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { username: 'octocat' },
    description: 'github: {username}; domain: {domain}; email: {email}; manual: anything',
  })
  @IsObject()
  data: Record<string, unknown>;
}

export class AdminActionDto {
  @ApiPropertyOptional({ example: 'GitHub account matches the homepage' })
  @IsOptional()
  @IsString()
  @MaxLength(5000)
  notes?: string;
}

export class ListAuditQuery extends PageQuery {
  @ApiPropertyOptional({ description: 'target name (case-insensitive) or id' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  target?: string;

  @ApiPropertyOptional({ enum: AUDIT_TARGET_TYPES })
  @IsOptional()
  @IsIn(AUDIT_TARGET_TYPES)
  target_type?: AuditTargetType;

  @ApiPropertyOptional({ example: 'publisher.verify' })
  @IsOptional()
  @IsString()
  @MaxLength(50)
  action?: string;
}

/** The one field each method needs, so an admin has something to check. */
const REQUIRED_DATA_FIELD: Record<VerificationMethod, string | null> = {
  github: 'username',
  domain: 'domain',
  email: 'email',
  manual: null,
};
const MAX_DATA_JSON_LENGTH = 10_000;

/** Checks `data` against its method; returns the field problems (empty when fine). */
export function verificationDataProblems(
  method: VerificationMethod,
  data: Record<string, unknown>,
): { field: string; message: string }[] {
  if (JSON.stringify(data).length > MAX_DATA_JSON_LENGTH)
    return [{ field: 'data', message: `must be at most ${MAX_DATA_JSON_LENGTH} characters as JSON` }];
  const required = REQUIRED_DATA_FIELD[method];
  if (!required) return [];
  const value = data[required];
  if (typeof value !== 'string' || value.trim() === '' || value.length > 320) {
    return [{ field: `data.${required}`, message: `the ${method} method needs data.${required} (a non-empty string)` }];
  }
  return [];
}
