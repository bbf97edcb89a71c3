import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';

export const DELTA_STATUSES = ['pending', 'ready', 'failed'] as const;
export type DeltaStatus = (typeof DELTA_STATUSES)[number];

/**
 * One delta between two versions of a package. A row exists from the moment a delta is queued
 * (`pending`); the patch fields are filled once it is `ready`. Unique per (package, from, to).
 */
@Entity('package_deltas')
export class PackageDeltaEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'package_id', type: 'varchar', length: 36 })
  packageId: string;

  @Column({ name: 'from_version_id', type: 'varchar', length: 36 })
  fromVersionId: string;

  @Column({ name: 'to_version_id', type: 'varchar', length: 36 })
  toVersionId: string;

  /** Version strings are kept beside the ids so removal by version and the views need no join. */
  @Column({ name: 'from_version', type: 'varchar', length: 100 })
  fromVersion: string;

  @Column({ name: 'to_version', type: 'varchar', length: 100 })
  toVersion: string;

  @Column({ type: 'varchar', length: 10 })
  status: DeltaStatus;

  /** `tbdelta/1` (docs/delta-format.md). */
  @Column({ type: 'varchar', length: 20, nullable: true })
  format: string | null;

  @Column({ name: 'patch_size', type: 'bigint', nullable: true, transformer: bigintNumber })
  patchSize: number | null;

  /** Size of the target version's file: what a client downloads without the delta. */
  @Column({ name: 'full_size', type: 'bigint', nullable: true, transformer: bigintNumber })
  fullSize: number | null;

  @Column({ name: 'changed_files', type: 'int', nullable: true })
  changedFiles: number | null;

  @Column({ name: 'added_files', type: 'int', nullable: true })
  addedFiles: number | null;

  @Column({ name: 'deleted_files', type: 'int', nullable: true })
  deletedFiles: number | null;

  @Column({ name: 'kept_files', type: 'int', nullable: true })
  keptFiles: number | null;

  /** Applying the patch rebuilds the target file byte for byte (its SHA-256 equals the version's checksum). */
  @Column({ name: 'exact_rebuild', type: 'boolean', nullable: true })
  exactRebuild: boolean | null;

  /** Object key `deltas/<packageId>/<from>-<to>-<hash>.tbdelta`. */
  @Column({ name: 'patch_storage_path', type: 'varchar', length: 500, nullable: true })
  patchStoragePath: string | null;

  /** SHA-256 of the whole patch file. */
  @Column({ name: 'patch_checksum', type: 'varchar', length: 64, nullable: true })
  patchChecksum: string | null;

  /** Last generation error (kept while retries run; the reason when `failed`). */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** When the stored patch was made (for a row not yet ready: when it was queued). */
  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
