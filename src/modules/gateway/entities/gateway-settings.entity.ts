import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

/**
 * The gateway's settings when its database is shared by several nodes (MySQL/MariaDB): one row, so an admin's
 * change holds on every node. The admin key is kept as its SHA-256 and its last four characters (shown masked).
 */
@Entity('gateway_settings')
export class GatewaySettingsEntity {
  @PrimaryColumn({ type: 'varchar', length: 32 })
  id: string;

  /** Every setting but the admin key, as JSON. */
  @Column({ type: 'text' })
  settings: string;

  @Column({ name: 'admin_key_hash', type: 'varchar', length: 64 })
  adminKeyHash: string;

  @Column({ name: 'admin_key_hint', type: 'varchar', length: 8 })
  adminKeyHint: string;

  /** Raised by every change: each node compares it to the one it holds and reads the row again when it moved. */
  @Column({ type: 'int' })
  version: number;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
