import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

export const SIGNUP_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type SignupStatus = (typeof SIGNUP_STATUSES)[number];

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

  /** The user an approval created. */
  @Column({ name: 'user_id', type: 'varchar', length: 36, nullable: true })
  userId: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'decided_at', type: 'datetime', nullable: true, transformer: utcDate })
  decidedAt: Date | null;
}
