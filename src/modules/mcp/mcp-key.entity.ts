import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonText, utcDate } from '../../database/column-transformers.js';

/** An MCP API key (`tb_mcp_…`): only the SHA-256 of the key is stored, never the key. */
@Entity('mcp_api_keys')
export class McpKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  /** Unique (keys are revoked by name). */
  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** SHA-256 of the whole key, lower-case hex. */
  @Column({ name: 'key_hash', type: 'varchar', length: 64 })
  keyHash: string;

  /** `tb_mcp_` and the first 8 hex characters, so a person can tell keys apart in a list. */
  @Column({ name: 'key_prefix', type: 'varchar', length: 16 })
  keyPrefix: string;

  @Column({ type: 'text', transformer: jsonText })
  permissions: string[];

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', nullable: true, transformer: utcDate })
  lastUsedAt: Date | null;

  @Column({ name: 'usage_count', type: 'integer', default: 0 })
  usageCount: number;
}

/** An MCP session (`initialize` on either door) when no Redis is configured; Redis holds them otherwise. */
@Entity('mcp_sessions')
export class McpSessionEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  /** The key's name, or `-` when the server runs with `--no-auth`. */
  @Column({ name: 'key_name', type: 'varchar', length: 100 })
  keyName: string;

  @Column({ name: 'protocol_version', type: 'varchar', length: 20 })
  protocolVersion: string;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_seen_at', type: 'datetime', transformer: utcDate })
  lastSeenAt: Date;
}
