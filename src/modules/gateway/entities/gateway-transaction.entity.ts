import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';

/**
 * `topup` and `adjustment` (an admin's set) change the balance; `hold` reserves part of it for a call in flight;
 * `charge` ends a billed call (its cost leaves the balance, its hold is released); `release` ends a call that was
 * not billed (the hold is released, nothing is charged).
 */
export type GatewayTransactionKind = 'topup' | 'adjustment' | 'hold' | 'charge' | 'release';

/**
 * One row of a user's ledger, written in the same database transaction as the change of `gateway_users` it
 * records, so a user's `balance_micros` is the sum of `amount_micros` and `held_micros` the sum of `held_micros`.
 */
@Entity('gateway_transactions')
export class GatewayTransactionEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId: string;

  @Column({ type: 'varchar', length: 16 })
  kind: GatewayTransactionKind;

  /** Signed: positive adds to the balance. */
  @Column({ name: 'amount_micros', type: 'bigint', transformer: bigintNumber })
  amountMicros: number;

  /** Signed: positive opens a hold, negative releases one. */
  @Column({ name: 'held_micros', type: 'bigint', transformer: bigintNumber })
  heldMicros: number;

  @Column({ name: 'usage_id', type: 'varchar', length: 36, nullable: true })
  usageId: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  note: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
