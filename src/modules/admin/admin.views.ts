import {
  type Caller,
  type PublisherDto,
  type PublisherEntity,
  type PublisherStats,
  publisherView,
} from '../registry/index.js';
import type { AuditEntryEntity } from './entities/audit-entry.entity.js';
import type { VerificationRequestEntity } from './entities/verification-request.entity.js';
import type {
  AdminActionResultDto,
  AuditEntryDto,
  AuditListDto,
  PendingPublisherDto,
  PendingPublisherListDto,
  PublisherDetailDto,
  PublisherListDto,
  VerificationRequestDto,
  VerificationSubmittedDto,
} from './admin.responses.js';
import type { PendingRequest, TransitionOutcome } from './publisher-verification.service.js';

/** The contact e-mail is for admins and the publisher itself, not for every visitor. */
export function publicPublisherView(publisher: PublisherEntity, stats: PublisherStats, caller: Caller): PublisherDto {
  const { email, ...view } = publisherView(publisher, stats);
  return caller.isAdmin || caller.publisherId === publisher.id ? { ...view, email } : view;
}

export function publisherListView(
  publishers: PublisherEntity[],
  stats: Map<string, PublisherStats>,
  caller: Caller,
  page: number,
  perPage: number,
  total: number,
): PublisherListDto {
  return {
    publishers: publishers.map((publisher) => publicPublisherView(publisher, stats.get(publisher.id)!, caller)),
    total,
    page,
    per_page: perPage,
  };
}

/** `requests` only for admins and the publisher itself; others get the public view. */
export function publisherDetailView(
  view: PublisherDto,
  requests: VerificationRequestEntity[] | null,
): PublisherDetailDto {
  return requests ? { ...view, verification_requests: requests.map(verificationRequestView) } : view;
}

export function verificationSubmittedView(request: VerificationRequestEntity): VerificationSubmittedDto {
  return {
    status: 'pending',
    request_id: request.id,
    publisher_id: request.publisherId,
    method: request.method,
    submitted_at: request.submittedAt.toISOString(),
  };
}

export function adminActionView({ publisher, notes }: TransitionOutcome): AdminActionResultDto {
  return { status: 'success', publisher_id: publisher.id, verification_status: publisher.verificationStatus, notes };
}

export function verificationRequestView(request: VerificationRequestEntity): VerificationRequestDto {
  return {
    id: request.id,
    method: request.method,
    data: request.data,
    submitted_at: request.submittedAt.toISOString(),
    reviewer: request.reviewer,
    decision: request.decision,
    notes: request.notes,
    reviewed_at: request.reviewedAt?.toISOString() ?? null,
  };
}

/**
 * One open verification request as the original ToolBox client reads it: the publisher's own fields
 * with `id` = the publisher's id (it verifies by that id), then the request. The request's id is
 * `verification_request_id` because `request_id` names the tracing id in every error body;
 * `request_id` stays as an alias (the 202 of POST /publishers/verify uses it), as does `publisher_id`.
 */
export function pendingPublisherView(
  request: VerificationRequestEntity,
  publisher: PublisherEntity | null,
  stats: PublisherStats,
): PendingPublisherDto {
  const publisherFields = publisher
    ? publisherView(publisher, stats)
    : {
        id: request.publisherId,
        name: null,
        display_name: null,
        verification_status: null,
        email: null,
        homepage: null,
        package_count: 0,
        total_downloads: 0,
        created_at: null,
      };
  return {
    ...publisherFields,
    publisher_id: request.publisherId,
    verification_request_id: request.id,
    request_id: request.id,
    method: request.method,
    data: request.data,
    submitted_at: request.submittedAt.toISOString(),
  };
}

export function auditEntryView(entry: AuditEntryEntity): AuditEntryDto {
  return {
    id: entry.id,
    actor: entry.actor,
    actor_id: entry.actorUserId,
    action: entry.action,
    target_type: entry.targetType,
    target: entry.target,
    target_id: entry.targetId,
    notes: entry.notes,
    created_at: entry.createdAt.toISOString(),
  };
}

export function pendingPublisherListView(
  items: PendingRequest[],
  total: number,
  page: number,
  perPage: number,
): PendingPublisherListDto {
  return {
    publishers: items.map(({ request, publisher, stats }) => pendingPublisherView(request, publisher, stats)),
    total,
    page,
    per_page: perPage,
  };
}

export function auditListView(entries: AuditEntryEntity[], total: number, page: number, perPage: number): AuditListDto {
  return { entries: entries.map(auditEntryView), total, page, per_page: perPage };
}
