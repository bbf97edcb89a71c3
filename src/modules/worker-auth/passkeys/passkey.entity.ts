import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, jsonText, utcDate } from '../../../database/column-transformers.js';

/**
 * A passkey (WebAuthn credential) of a platform user. Only what verifying its assertions needs: the credential
 * id, the COSE public key and the last sign count; never anything secret.
 */
@Entity('platform_passkeys')
export class PasskeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 28 })
  userId: string;

  /** SHA-256 (hex) of the credential id: ids may be up to 1023 bytes, too long for a unique index on MySQL. */
  @Column({ name: 'credential_key', type: 'varchar', length: 64 })
  credentialKey: string;

  /** The credential id, base64url without padding (as browsers and the web client send it). */
  @Column({ name: 'credential_id', type: 'text' })
  credentialId: string;

  /** The COSE public key, base64url. */
  @Column({ name: 'public_key', type: 'text' })
  publicKey: string;

  /** The authenticator's signature counter after the last accepted assertion (uint32). */
  @Column({ name: 'sign_count', type: 'bigint', transformer: bigintNumber })
  signCount: number;

  @Column({ type: 'varchar', length: 64 })
  name: string;

  /** Transports the browser reported at registration (`internal`, `usb`, `hybrid`…), JSON. */
  @Column({ type: 'text', transformer: jsonText })
  transports: string[];

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'datetime', nullable: true, transformer: utcDate })
  lastUsedAt: Date | null;
}
