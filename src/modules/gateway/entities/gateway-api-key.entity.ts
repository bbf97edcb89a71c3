import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

/** A user's key for the OpenAI-compatible API (`sk-tb-` + 48 hex): only its SHA-256 is stored. */
@Entity('gateway_api_keys')
export class GatewayApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 36 })
  userId: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash: string;

  /** `sk-tb-` and the first 8 hex characters, so a person can tell keys apart. */
  @Column({ name: 'key_prefix', type: 'varchar', length: 16 })
  keyPrefix: string;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'datetime', nullable: true, transformer: utcDate })
  revokedAt: Date | null;
}
