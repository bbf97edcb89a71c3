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

export function pendingPublisherView(request: VerificationRequestEntity, publisher: PublisherEntity | null) {
  return {
    request_id: request.id,
    publisher_id: request.publisherId,
    name: publisher?.name ?? null,
    display_name: publisher?.displayName ?? null,
    email: publisher?.email ?? null,
    homepage: publisher?.homepage ?? null,
    verification_status: publisher?.verificationStatus ?? null,
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
