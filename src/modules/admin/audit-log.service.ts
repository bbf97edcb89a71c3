import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, type EntityManager, type Repository } from 'typeorm';
import { offsetOf } from '../../common/pagination.js';
import { AuditEntryEntity, type AuditTargetType } from './entities/audit-entry.entity.js';
import { timeOrderedId } from './time-ordered-id.js';

export interface AuditRecord {
  actorUserId: string | null;
  actor: string;
  action: string;
  targetType: AuditTargetType;
  targetId: string;
  target: string;
  notes?: string | null;
}

export interface AuditFilter {
  page: number;
  perPage: number;
  /** The target's name (case-insensitive) or id. */
  target?: string;
  targetType?: AuditTargetType;
  action?: string;
}

@Injectable()
export class AuditLogService {
  constructor(@InjectRepository(AuditEntryEntity) private readonly entries: Repository<AuditEntryEntity>) {}

  /** Appends an entry; pass the transaction of the change it records so both commit or neither. */
  async record(record: AuditRecord, manager: EntityManager = this.entries.manager): Promise<AuditEntryEntity> {
    const entry = manager.create(AuditEntryEntity, {
      id: timeOrderedId(),
      actorUserId: record.actorUserId,
      actor: record.actor.slice(0, 191),
      action: record.action,
      targetType: record.targetType,
      targetId: record.targetId,
      target: record.target.slice(0, 100),
      targetLower: record.target.slice(0, 100).toLowerCase(),
      notes: record.notes ?? null,
      createdAt: new Date(),
    });
    await manager.insert(AuditEntryEntity, entry);
    return entry;
  }

  /** Newest first. */
  async list(filter: AuditFilter): Promise<{ items: AuditEntryEntity[]; total: number }> {
    const query = this.entries.createQueryBuilder('entry');
    const target = filter.target;
    if (target) {
      query.andWhere(
        new Brackets((where) => {
          where
            .where('entry.target_lower = :targetLower', { targetLower: target.toLowerCase() })
            .orWhere('entry.target_id = :targetId', { targetId: target });
        }),
      );
    }
    if (filter.targetType) query.andWhere('entry.target_type = :targetType', { targetType: filter.targetType });
    if (filter.action) query.andWhere('entry.action = :action', { action: filter.action });
    const [items, total] = await query
      .orderBy('entry.created_at', 'DESC')
      .addOrderBy('entry.id', 'DESC')
      .skip(offsetOf(filter.page, filter.perPage))
      .take(filter.perPage)
      .getManyAndCount();
    return { items, total };
  }
}
