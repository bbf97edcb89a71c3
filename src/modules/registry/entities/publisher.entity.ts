import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';
import type { VerificationStatus } from '../registry-vocabulary.js';

export { VERIFICATION_STATUSES, type VerificationStatus } from '../registry-vocabulary.js';

@Entity('publishers')
export class PublisherEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** Lower-cased name: publisher names are unique case-insensitively on every engine. */
  @Column({ name: 'name_lower', type: 'varchar', length: 100 })
  nameLower: string;

  @Column({ name: 'display_name', type: 'varchar', length: 200 })
  displayName: string;

  @Column({ type: 'varchar', length: 320, nullable: true })
  email: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  homepage: string | null;

  @Column({ name: 'verification_status', type: 'varchar', length: 20 })
  verificationStatus: VerificationStatus;

  @Column({ name: 'owner_user_id', type: 'varchar', length: 36 })
  ownerUserId: string;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
