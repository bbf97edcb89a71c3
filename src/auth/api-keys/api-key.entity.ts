import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonText, utcDate } from '../../database/column-transformers.js';

/** An API key (MCP transport, model gateway): only the SHA-256 of the key is stored, never the key. */
@Entity('api_keys')
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  /** The platform user id the key acts for. */
  @Column({ type: 'varchar', length: 191 })
  owner: string;

  /** Unique among the owner's unrevoked keys (seed 02: keys are revoked by name). */
  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** SHA-256 of the whole key, lower-case hex. */
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash: string;

  /** The key's first characters, so a person can tell keys apart in a list. */
  @Column({ name: 'key_prefix', type: 'varchar', length: 16 })
  keyPrefix: string;

  @Column({ type: 'text', transformer: jsonText })
  permissions: string[];

  /** Access level -1/0/1/2 the key's calls run at. */
  @Column({ type: 'integer' })
  level: number;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', nullable: true, transformer: utcDate })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'datetime', nullable: true, transformer: utcDate })
  revokedAt: Date | null;
}
