import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

/**
 * The registry's record of a platform user (admin flag, publisher ownership). The table keeps its name
 * `users`; the class is named for the registry so WorkerAuth's own users do not clash with it.
 */
@Entity('users')
export class RegistryAccountEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'platform_user_id', type: 'varchar', length: 191 })
  platformUserId: string;

  @Column({ type: 'varchar', length: 191 })
  username: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  email: string | null;

  @Column({ name: 'is_admin', type: 'boolean', default: false })
  isAdmin: boolean;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
