import { Column, Entity, PrimaryColumn } from 'typeorm';
import { jsonText, utcDate } from '../../../database/column-transformers.js';

/** A platform user (WorkerAuth): `usr_<24 hex>`, unique e-mail regardless of case, access level -1/0/1/2. */
@Entity('platform_users')
export class UserEntity {
  @PrimaryColumn({ type: 'varchar', length: 28 })
  id: string;

  @Column({ type: 'varchar', length: 191 })
  username: string;

  /** As the user gave it. */
  @Column({ type: 'varchar', length: 320 })
  email: string;

  /** The e-mail lower-cased, unique. */
  @Column({ name: 'email_key', type: 'varchar', length: 191 })
  emailKey: string;

  @Column({ type: 'integer' })
  level: number;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_login_at', type: 'datetime', nullable: true, transformer: utcDate })
  lastLoginAt: Date | null;

  /** Free-form settings of the web client (JSON object; null until first saved). */
  @Column({ type: 'text', nullable: true, transformer: jsonText })
  settings: Record<string, unknown> | null;

  /** Data modules keep per user, by module name (JSON object; null until first saved). */
  @Column({ name: 'mod_data', type: 'text', nullable: true, transformer: jsonText })
  modData: Record<string, unknown> | null;
}
