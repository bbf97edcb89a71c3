import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';

export type GatewayTransactionKind = 'topup' | 'charge' | 'adjustment';

/** A change of a user's balance: top-ups add, charges (one per billed request) subtract. */
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

  @Column({ name: 'usage_id', type: 'varchar', length: 36, nullable: true })
  usageId: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  note: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
