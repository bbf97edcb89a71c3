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

  /** The settled balance: the sum of the user's ledger rows (see docs/gateway.md, "Ledger", for how low it may go). */
  @Column({ name: 'balance_micros', type: 'bigint', transformer: bigintNumber })
  balanceMicros: number;

  /** What calls in flight hold; a new call may hold at most `balance_micros - held_micros`. */
  @Column({ name: 'held_micros', type: 'bigint', transformer: bigintNumber })
  heldMicros: number;

  @Column({ type: 'boolean' })
  active: boolean;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
