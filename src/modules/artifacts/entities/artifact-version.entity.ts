import { Column, Entity, PrimaryColumn } from 'typeorm';
import { utcDate } from '../../../database/column-transformers.js';

/** One release of an artifact; created with its first build, holding one build per platform and architecture. */
@Entity('artifact_versions')
export class ArtifactVersionEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'artifact_id', type: 'varchar', length: 36 })
  artifactId: string;

  @Column({ type: 'varchar', length: 100 })
  version: string;

  @Column({ type: 'text', nullable: true })
  changelog: string | null;

  @Column({ name: 'min_os_version', type: 'varchar', length: 50, nullable: true })
  minOsVersion: string | null;

  @Column({ name: 'released_at', type: 'datetime', transformer: utcDate })
  releasedAt: Date;
}
