import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonText, utcDate } from '../../../database/column-transformers.js';
import type { GatewayTier } from './gateway-user.entity.js';

/**
 * A live voice session. The token in its URLs is a bearer credential, so only its SHA-256 is stored; the
 * row is shared by every gateway process (a socket may land on another process than the creation).
 */
@Entity('gateway_live_sessions')
export class GatewayLiveSessionEntity {
  /** SHA-256 of the session token. */
  @PrimaryColumn({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash: string;

  /** Null for the admin key. */
  @Column({ name: 'user_id', type: 'varchar', length: 36, nullable: true })
  userId: string | null;

  @Column({ name: 'key_id', type: 'varchar', length: 36, nullable: true })
  keyId: string | null;

  @Column({ type: 'varchar', length: 8 })
  tier: GatewayTier;

  @Column({ type: 'text', transformer: jsonText })
  config: Record<string, unknown>;

  /** The conversation so far: [{role, content, interrupted?}]. */
  @Column({ type: 'text', transformer: jsonText })
  history: Array<{ role: 'user' | 'assistant'; content: string; interrupted?: boolean }>;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', transformer: utcDate })
  expiresAt: Date;

  @Column({ name: 'closed_at', type: 'datetime', nullable: true, transformer: utcDate })
  closedAt: Date | null;
}
