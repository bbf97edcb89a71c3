import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';

export const GATEWAY_TIERS = ['payg', 'sub', 'admin'] as const;
export type GatewayTier = (typeof GATEWAY_TIERS)[number];

/** A gateway user. Money is kept in micro-units (1 = 0.000001 of the currency) so sums are exact. */
@Entity('gateway_users')
export class GatewayUserEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 191 })
  email: string;

  @Column({ type: 'varchar', length: 8 })
  tier: GatewayTier;

  /** May dip below zero by at most what calls in flight were held for (see MeteringService). */
  @Column({ name: 'balance_micros', type: 'bigint', transformer: bigintNumber })
  balanceMicros: number;

  @Column({ type: 'boolean' })
  active: boolean;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
