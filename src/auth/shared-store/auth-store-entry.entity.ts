import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../database/column-transformers.js';

/** One entry of the database AuthStore (revocations, OAuth states, magic-link tokens). */
@Entity('auth_store_entries')
export class AuthStoreEntryEntity {
  @PrimaryColumn({ name: 'entry_key', type: 'varchar', length: 191 })
  key: string;

  @Column({ type: 'text' })
  value: string;

  @Column({ name: 'expires_at', type: 'datetime', transformer: utcDate })
  expiresAt: Date;
}
