import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

/** A provider account linked to a user (`discord`, `google`; `magic_link` logins need none). */
@Entity('platform_user_identities')
export class UserIdentityEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 28 })
  userId: string;

  @Column({ type: 'varchar', length: 32 })
  provider: string;

  @Column({ name: 'provider_user_id', type: 'varchar', length: 191 })
  providerUserId: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  email: string | null;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_login_at', type: 'datetime', nullable: true, transformer: utcDate })
  lastLoginAt: Date | null;
}
