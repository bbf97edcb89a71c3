import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, utcDate } from '../../../database/column-transformers.js';
import type { ArtifactType } from '../artifact-vocabulary.js';

/** A compiled binary product (desktop app, CLI, …) owned by a publisher; its files are builds. */
@Entity('artifacts')
export class ArtifactEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** Lower-cased name: artifact names are unique case-insensitively on every engine. */
  @Column({ name: 'name_lower', type: 'varchar', length: 100 })
  nameLower: string;

  @Column({ name: 'artifact_type', type: 'varchar', length: 30 })
  artifactType: ArtifactType;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  homepage: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  repository: string | null;

  @Column({ name: 'publisher_id', type: 'varchar', length: 36 })
  publisherId: string;

  /** Highest version that has a build; null until the first build. */
  @Column({ name: 'latest_version', type: 'varchar', length: 100, nullable: true })
  latestVersion: string | null;

  @Column({ name: 'total_downloads', type: 'bigint', transformer: bigintNumber })
  totalDownloads: number;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
