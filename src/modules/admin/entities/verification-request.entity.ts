import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonText, utcDate } from '../../../database/column-transformers.js';
import type { VerificationStatus } from '../../registry/index.js';

export const VERIFICATION_METHODS = ['github', 'domain', 'email', 'manual'] as const;
export type VerificationMethod = (typeof VERIFICATION_METHODS)[number];

/**
 * One verification request of a publisher. It is open while `decision` is null; an admin action that
 * takes the publisher out of `pending` closes it with the reviewer, the decision and the notes.
 */
@Entity('publisher_verification_requests')
export class VerificationRequestEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'publisher_id', type: 'varchar', length: 36 })
  publisherId: string;

  @Column({ type: 'varchar', length: 20 })
  method: VerificationMethod;

  @Column({ type: 'text', transformer: jsonText })
  data: object;

  @Column({ name: 'submitted_by_user_id', type: 'varchar', length: 36 })
  submittedByUserId: string;

  @Column({ name: 'submitted_at', type: 'datetime', transformer: utcDate })
  submittedAt: Date;

  @Column({ name: 'reviewer_user_id', type: 'varchar', length: 36, nullable: true })
  reviewerUserId: string | null;

  /** Username of the reviewer at review time (the audit log keeps the same). */
  @Column({ type: 'varchar', length: 191, nullable: true })
  reviewer: string | null;

  /** The status the review led to: verified, rejected or suspended. */
  @Column({ type: 'varchar', length: 20, nullable: true })
  decision: VerificationStatus | null;

  @Column({ type: 'text', nullable: true })
  notes: string | null;

  @Column({ name: 'reviewed_at', type: 'datetime', nullable: true, transformer: utcDate })
  reviewedAt: Date | null;
}
