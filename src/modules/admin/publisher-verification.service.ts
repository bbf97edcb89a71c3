import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, type Repository } from 'typeorm';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import {
  type Caller,
  type PublisherEntity,
  PublishersService,
  type PublisherStats,
  RegistryEvents,
} from '../registry/index.js';
import { AuditLogService } from './audit-log.service.js';
import { VerificationRequestEntity, type VerificationMethod } from './entities/verification-request.entity.js';
import { SUBMITTABLE_STATUSES, TRANSITIONS, type AdminAction } from './publisher-transitions.js';
import { timeOrderedId } from './time-ordered-id.js';

export interface PendingRequest {
  request: VerificationRequestEntity;
  publisher: PublisherEntity | null;
  stats: PublisherStats;
}

export interface TransitionOutcome {
  publisher: PublisherEntity;
  notes: string | null;
}

/** Verification requests and the admin transitions of a publisher's status, each one audited. */
@Injectable()
export class PublisherVerificationService {
  constructor(
    @InjectRepository(VerificationRequestEntity) private readonly requests: Repository<VerificationRequestEntity>,
    private readonly dataSource: DataSource,
    private readonly publishers: PublishersService,
    private readonly audit: AuditLogService,
    private readonly events: RegistryEvents,
  ) {}

  /** The caller's publisher asks to be verified: unverified or rejected → pending, with the request stored. */
  async submit(
    caller: Caller,
    method: VerificationMethod,
    data: Record<string, unknown>,
  ): Promise<VerificationRequestEntity> {
    if (!caller.user) throw new PlatformError('UNAUTHORIZED', 'Authentication required');
    const publisher = caller.publisherId ? await this.publishers.findById(caller.publisherId) : null;
    if (!publisher)
      throw new PlatformError('FORBIDDEN', 'Register as a publisher first (POST /api/v1/auth/register-publisher)');
    if (!SUBMITTABLE_STATUSES.includes(publisher.verificationStatus))
      throw statusConflict(publisher, 'submit a verification request');
    const request = this.requests.create({
      id: timeOrderedId(),
      publisherId: publisher.id,
      method,
      data,
      submittedByUserId: caller.user.id,
      submittedAt: new Date(),
      reviewerUserId: null,
      reviewer: null,
      decision: null,
      notes: null,
      reviewedAt: null,
    });
    await this.dataSource.transaction(async (manager) => {
      // Compare-and-set: of two requests sent at once, only one moves the publisher to pending.
      if (!(await this.publishers.transitionStatus(publisher.id, SUBMITTABLE_STATUSES, 'pending', manager))) {
        const current = (await this.publishers.findById(publisher.id)) ?? publisher;
        throw statusConflict(current, 'submit a verification request');
      }
      await manager.insert(VerificationRequestEntity, request);
    });
    return request;
  }

  /** Open requests, oldest first (first come, first reviewed), each with its publisher's package_count and total_downloads. */
  async pending(caller: Caller, page: number, perPage: number): Promise<{ items: PendingRequest[]; total: number }> {
    if (!caller.isAdmin) throw new PlatformError('FORBIDDEN', 'Admin required');
    const [rows, total] = await this.requests.findAndCount({
      where: { decision: IsNull() },
      order: { submittedAt: 'ASC', id: 'ASC' },
      skip: offsetOf(page, perPage),
      take: perPage,
    });
    const publisherIds = [...new Set(rows.map((row) => row.publisherId))];
    const [publishers, stats] = await Promise.all([
      this.publishers.findByIds(publisherIds),
      this.publishers.stats(publisherIds, caller),
    ]);
    const noPackages: PublisherStats = { packageCount: 0, totalDownloads: 0 };
    return {
      items: rows.map((request) => ({
        request,
        publisher: publishers.get(request.publisherId) ?? null,
        stats: stats.get(request.publisherId) ?? noPackages,
      })),
      total,
    };
  }

  async requestsOf(publisherId: string): Promise<VerificationRequestEntity[]> {
    return this.requests.find({ where: { publisherId }, order: { submittedAt: 'DESC', id: 'DESC' } });
  }

  /**
   * An admin action on a publisher. The status change, the closing of an open request and the audit
   * entry commit together; a status that does not allow the action is a 409 naming it.
   */
  async transition(
    caller: Caller,
    publisherIdOrName: string,
    action: AdminAction,
    notes: string | null,
  ): Promise<TransitionOutcome> {
    if (!caller.isAdmin || !caller.user) throw new PlatformError('FORBIDDEN', 'Admin required');
    const admin = caller.user;
    const publisher = await this.publishers.findByNameOrId(publisherIdOrName);
    if (!publisher) throw new PlatformError('NOT_FOUND', `Publisher "${publisherIdOrName}" not found`);
    const { from, to } = TRANSITIONS[action];
    if (!from.includes(publisher.verificationStatus)) throw statusConflict(publisher, action);
    const now = new Date();
    await this.dataSource.transaction(async (manager) => {
      if (!(await this.publishers.transitionStatus(publisher.id, from, to, manager))) {
        const current = (await this.publishers.findById(publisher.id)) ?? publisher;
        throw statusConflict(current, action);
      }
      if (publisher.verificationStatus === 'pending') {
        await manager.update(
          VerificationRequestEntity,
          { publisherId: publisher.id, decision: IsNull() },
          { decision: to, reviewerUserId: admin.id, reviewer: admin.username, notes, reviewedAt: now },
        );
      }
      await this.audit.record(
        {
          actorUserId: admin.id,
          actor: admin.username,
          action: `publisher.${action}`,
          targetType: 'publisher',
          targetId: publisher.id,
          target: publisher.name,
          notes,
        },
        manager,
      );
    });
    if ((publisher.verificationStatus === 'verified') !== (to === 'verified')) {
      await this.events.emit('publisherChanged', { publisherId: publisher.id, verified: to === 'verified' });
    }
    return { publisher: { ...publisher, verificationStatus: to, updatedAt: now }, notes };
  }
}

function statusConflict(publisher: PublisherEntity, action: string): PlatformError {
  return new PlatformError(
    'CONFLICT',
    `Cannot ${action} publisher "${publisher.name}": its verification status is "${publisher.verificationStatus}"`,
  );
}
