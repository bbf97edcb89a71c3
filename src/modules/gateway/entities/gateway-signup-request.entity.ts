import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

export const SIGNUP_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type SignupStatus = (typeof SIGNUP_STATUSES)[number];
/** The tiers an applicant may ask for; `admin` is never requested, only granted. */
export const SIGNUP_TIERS = ['payg', 'sub'] as const;
export type SignupTier = (typeof SIGNUP_TIERS)[number];

/** A request for an account (`POST /api/signup`), decided by an admin. */
@Entity('gateway_signup_requests')
export class GatewaySignupRequestEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 191 })
  email: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  note: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: SignupStatus;

  /** The tier the applicant asked for (`payg`/`sub`); the admin decides what an approval grants. */
  @Column({ name: 'requested_tier', type: 'varchar', length: 8, nullable: true })
  requestedTier: SignupTier | null;

  /** The user an approval created. */
  @Column({ name: 'user_id', type: 'varchar', length: 36, nullable: true })
  userId: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'decided_at', type: 'datetime', nullable: true, transformer: utcDate })
  decidedAt: Date | null;
}
