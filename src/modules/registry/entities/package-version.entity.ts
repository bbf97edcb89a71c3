import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, jsonText, utcDate } from '../../../database/column-transformers.js';

@Entity('package_versions')
export class PackageVersionEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'package_id', type: 'varchar', length: 36 })
  packageId: string;

  @Column({ type: 'varchar', length: 100 })
  version: string;

  @Column({ type: 'text', nullable: true })
  changelog: string | null;

  /** Semver range of host (ToolBox) versions this version supports; null means any. */
  @Column({ name: 'toolbox_version', type: 'varchar', length: 200, nullable: true })
  toolboxVersion: string | null;

  /** Requirement strings as uploaded and normalised, e.g. `lib>=1.2.0`. */
  @Column({ type: 'text', nullable: true, transformer: jsonText })
  dependencies: string[] | null;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: bigintNumber })
  sizeBytes: number;

  @Column({ name: 'checksum_sha256', type: 'varchar', length: 64 })
  checksumSha256: string;

  @Column({ name: 'storage_key', type: 'varchar', length: 500 })
  storageKey: string;

  @Column({ type: 'boolean', default: false })
  yanked: boolean;

  @Column({ name: 'yank_reason', type: 'text', nullable: true })
  yankReason: string | null;

  @Column({ type: 'bigint', default: 0, transformer: bigintNumber })
  downloads: number;

  @Column({ name: 'published_at', type: 'datetime', transformer: utcDate })
  publishedAt: Date;
}
