import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

export const AUDIT_TARGET_TYPES = ['publisher', 'package'] as const;
export type AuditTargetType = (typeof AUDIT_TARGET_TYPES)[number];

/**
 * An append-only record of an admin action or a package delete. Names are copied at the time of the
 * action so an entry still reads right after the target is renamed or deleted.
 */
@Entity('audit_log')
export class AuditEntryEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'actor_user_id', type: 'varchar', length: 36, nullable: true })
  actorUserId: string | null;

  /** Username of the actor; "system" when the change had no authenticated user. */
  @Column({ type: 'varchar', length: 191 })
  actor: string;

  /** `publisher.verify`, `publisher.suspend`, `package.delete`, … */
  @Column({ type: 'varchar', length: 50 })
  action: string;

  @Column({ name: 'target_type', type: 'varchar', length: 20 })
  targetType: AuditTargetType;

  /** The target's name at the time of the action. */
  @Column({ type: 'varchar', length: 100 })
  target: string;

  @Column({ name: 'target_lower', type: 'varchar', length: 100 })
  targetLower: string;

  @Column({ name: 'target_id', type: 'varchar', length: 36 })
  targetId: string;

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
