import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber, jsonText, utcDate } from '../../../database/column-transformers.js';
import type { PackageType, Visibility } from '../registry-vocabulary.js';

export { PACKAGE_TYPES, VISIBILITIES, type PackageType, type Visibility } from '../registry-vocabulary.js';

@Entity('packages')
export class PackageEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ name: 'name_lower', type: 'varchar', length: 100 })
  nameLower: string;

  @Column({ name: 'display_name', type: 'varchar', length: 200 })
  displayName: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  @Column({ name: 'package_type', type: 'varchar', length: 20 })
  packageType: PackageType;

  @Column({ type: 'varchar', length: 10 })
  visibility: Visibility;

  @Column({ type: 'varchar', length: 500, nullable: true })
  homepage: string | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  repository: string | null;

  @Column({ type: 'varchar', length: 100, nullable: true })
  license: string | null;

  @Column({ type: 'text', nullable: true, transformer: jsonText })
  keywords: string[] | null;

  @Column({ type: 'text', nullable: true })
  readme: string | null;

  @Column({ name: 'publisher_id', type: 'varchar', length: 36 })
  publisherId: string;

  @Column({ name: 'latest_version', type: 'varchar', length: 100, nullable: true })
  latestVersion: string | null;

  @Column({ name: 'total_downloads', type: 'bigint', default: 0, transformer: bigintNumber })
  totalDownloads: number;

  @Column({ name: 'created_at', type: 'datetime', transformer: utcDate })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', transformer: utcDate })
  updatedAt: Date;
}
