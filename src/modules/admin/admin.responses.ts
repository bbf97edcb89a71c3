import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import { PageFieldsDto } from '../../common/pagination.js';
import { PublisherDto, VERIFICATION_STATUSES, type VerificationStatus } from '../registry/index.js';
import { AUDIT_TARGET_TYPES, type AuditTargetType } from './entities/audit-entry.entity.js';
import { VERIFICATION_METHODS, type VerificationMethod } from './entities/verification-request.entity.js';

/** Response bodies of publishers and their verification (wire names of the seed); mapped in admin.views.ts. */

const VERIFICATION_DATA = {
  type: 'object',
  additionalProperties: true,
  example: { username: 'octocat' },
  description: 'What the method needs checked (github: username, domain: domain, email: email, manual: notes)',
} as const;

export class PublisherListDto extends PageFieldsDto {
  @ApiProperty({ type: () => [PublisherDto] })
  publishers: PublisherDto[];
}

export class VerificationRequestDto {
  @ApiProperty({ type: String, format: 'uuid' })
  id: string;

  @ApiProperty({ enum: VERIFICATION_METHODS })
  method: VerificationMethod;

  @ApiProperty(VERIFICATION_DATA)
  data: object;

  @ApiProperty({ type: String, format: 'date-time' })
  submitted_at: string;

  @ApiProperty({ type: String, nullable: true, description: "The reviewing admin's username" })
  reviewer: string | null;

  @ApiProperty({ enum: VERIFICATION_STATUSES, nullable: true, description: 'null while the request is open' })
  decision: VerificationStatus | null;

  @ApiProperty({ type: String, nullable: true })
  notes: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  reviewed_at: string | null;
}

/** A publisher as its admins and the publisher itself see it: with its verification requests. */
export class PublisherDetailDto extends PublisherDto {
  @ApiPropertyOptional({ type: () => [VerificationRequestDto], description: 'Admins and the publisher itself only' })
  verification_requests?: VerificationRequestDto[];
}

export class VerificationSubmittedDto {
  @ApiProperty({ type: String, enum: ['pending'] })
  status: 'pending';

  @ApiProperty({ type: String, format: 'uuid' })
  request_id: string;

  @ApiProperty({ type: String, format: 'uuid' })
  publisher_id: string;

  @ApiProperty({ enum: VERIFICATION_METHODS })
  method: VerificationMethod;

  @ApiProperty({ type: String, format: 'date-time' })
  submitted_at: string;
}

/**
 * One open verification request as the original ToolBox client reads it: the publisher's own fields with
 * `id` = the publisher's id, then the request (`verification_request_id`; `request_id` and `publisher_id`
 * are kept as aliases for existing clients).
 */
export class PendingPublisherDto extends PickType(VerificationRequestDto, ['method', 'data', 'submitted_at'] as const) {
  @ApiProperty({ type: String, format: 'uuid', description: "The publisher's id (what the admin verifies)" })
  id: string;

  @ApiProperty({ type: String, nullable: true, example: 'toolbox-team' })
  name: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'ToolBox Team' })
  display_name: string | null;

  @ApiProperty({ enum: VERIFICATION_STATUSES, nullable: true })
  verification_status: VerificationStatus | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  email?: string | null;

  @ApiProperty({ type: String, nullable: true })
  homepage: string | null;

  @ApiPropertyOptional({ type: Number, description: "The publisher's packages, private ones included" })
  package_count?: number;

  @ApiPropertyOptional({ type: Number })
  total_downloads?: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  created_at: string | null;

  @ApiProperty({ type: String, format: 'uuid', description: 'Alias of id' })
  publisher_id: string;

  @ApiProperty({ type: String, format: 'uuid', description: 'The verification request' })
  verification_request_id: string;

  @ApiProperty({ type: String, format: 'uuid', description: 'Alias of verification_request_id' })
  request_id: string;
}

export class PendingPublisherListDto extends PageFieldsDto {
  @ApiProperty({ type: () => [PendingPublisherDto], description: 'Oldest first' })
  publishers: PendingPublisherDto[];
}

export class AdminActionResultDto {
  @ApiProperty({ type: String, enum: ['success'] })
  status: 'success';

  @ApiProperty({ type: String, format: 'uuid' })
  publisher_id: string;

  @ApiProperty({ enum: VERIFICATION_STATUSES, description: 'The status after the action' })
  verification_status: VerificationStatus;

  @ApiProperty({ type: String, nullable: true, example: 'checked the GitHub account' })
  notes: string | null;
}

export class AuditEntryDto {
  @ApiProperty({ type: String })
  id: string;

  @ApiProperty({ type: String, example: 'root', description: "The acting user's name at the time" })
  actor: string;

  @ApiProperty({ type: String, nullable: true, format: 'uuid' })
  actor_id: string | null;

  @ApiProperty({ type: String, example: 'publisher.verify' })
  action: string;

  @ApiProperty({ enum: AUDIT_TARGET_TYPES })
  target_type: AuditTargetType;

  @ApiProperty({ type: String, example: 'toolbox-team', description: "The target's name at the time" })
  target: string;

  @ApiProperty({ type: String, format: 'uuid' })
  target_id: string;

  @ApiProperty({ type: String, nullable: true })
  notes: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  created_at: string;
}

export class AuditListDto extends PageFieldsDto {
  @ApiProperty({ type: () => [AuditEntryDto], description: 'Newest first' })
  entries: AuditEntryDto[];
}
