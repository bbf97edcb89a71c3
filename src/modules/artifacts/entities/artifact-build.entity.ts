import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';
import type { Architecture, Platform } from '../artifact-vocabulary.js';

/** One file of a version for a platform and architecture; unique per (version, platform, architecture). */
@Entity('artifact_builds')
export class ArtifactBuildEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'artifact_id', type: 'varchar', length: 36 })
  artifactId: string;

  @Column({ name: 'version_id', type: 'varchar', length: 36 })
  versionId: string;

  @Column({ type: 'varchar', length: 10 })
  platform: Platform;

  @Column({ type: 'varchar', length: 10 })
  architecture: Architecture;

  /** The uploaded file's name, reduced to safe characters; sent back in Content-Disposition. */
  @Column({ type: 'varchar', length: 200 })
  filename: string;

  @Column({ name: 'size_bytes', type: 'bigint', transformer: bigintNumber })
  sizeBytes: number;

  @Column({ name: 'checksum_sha256', type: 'varchar', length: 64 })
  checksumSha256: string;

  @Column({ name: 'installer_type', type: 'varchar', length: 50, nullable: true })
  installerType: string | null;

  /** Object key `artifacts/<artifactId>/<version>/<platform>-<architecture>-<hash>/<filename>`. */
  @Column({ name: 'storage_key', type: 'varchar', length: 500 })
  storageKey: string;

  @Column({ type: 'bigint', transformer: bigintNumber })
  downloads: number;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;
}
