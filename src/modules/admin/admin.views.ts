import type { Caller } from '../registry/caller.js';
import type { PublisherEntity } from '../registry/entities/publisher.entity.js';
import type { PublisherStats } from '../registry/publishers.service.js';
import { publisherView } from '../registry/registry.views.js';
import type { AuditEntryEntity } from './entities/audit-entry.entity.js';
import type { VerificationRequestEntity } from './entities/verification-request.entity.js';

/** The contact e-mail is for admins and the publisher itself, not for every visitor. */
export function publicPublisherView(publisher: PublisherEntity, stats: PublisherStats, caller: Caller) {
  const { email, ...view } = publisherView(publisher, stats);
  return caller.isAdmin || caller.publisherId === publisher.id ? { ...view, email } : view;
}

export function verificationRequestView(request: VerificationRequestEntity) {
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
export function pendingPublisherView(request: VerificationRequestEntity, publisher: PublisherEntity | null, stats: PublisherStats) {
  const publisherFields = publisher
    ? publisherView(publisher, stats)
    : { id: request.publisherId, name: null, display_name: null, verification_status: null, email: null, homepage: null, package_count: 0, total_downloads: 0, created_at: null };
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

export function auditEntryView(entry: AuditEntryEntity) {
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
