import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';

/** One billable request: who, which key and model, exact tokens, cost, latency and the answer's status. */
@Entity('gateway_usage')
export class GatewayUsageEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  /** Null for the admin key, which belongs to no user. */
  @Column({ name: 'user_id', type: 'varchar', length: 36, nullable: true })
  userId: string | null;

  @Column({ name: 'key_id', type: 'varchar', length: 36, nullable: true })
  keyId: string | null;

  @Column({ type: 'varchar', length: 64 })
  endpoint: string;

  @Column({ type: 'varchar', length: 191 })
  model: string;

  @Column({ name: 'prompt_tokens', type: 'integer' })
  promptTokens: number;

  @Column({ name: 'completion_tokens', type: 'integer' })
  completionTokens: number;

  @Column({ name: 'cost_micros', type: 'bigint', transformer: bigintNumber })
  costMicros: number;

  @Column({ name: 'latency_ms', type: 'integer' })
  latencyMs: number;

  /** The HTTP status answered; 499 when the client went away mid-stream (billed for what was generated). */
  @Column({ type: 'integer' })
  status: number;

  /**
   * Whether the call counts in usage totals and (PAYG) was charged: answered, or cut by the client (499). A call
   * that failed keeps its row, with the tokens the runtime reported, but is not billed.
   */
  @Column({ type: 'boolean' })
  billed: boolean;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
