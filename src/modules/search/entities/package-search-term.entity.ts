import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SearchField } from '../search-terms.js';

/**
 * One normalized word of a package, per field it appears in. Owned by the Search module and kept
 * in step with the registry's writes through RegistryEvents. The ranking columns choose candidates
 * only: visibility, downloads and verification are read again from their own tables for the page,
 * so a lagging row can never reveal a package.
 */
@Entity('package_search_terms')
export class PackageSearchTermEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  term: string;

  @PrimaryColumn({ name: 'package_id', type: 'varchar', length: 36 })
  packageId: string;

  /** Field weights live in the query (search-terms.ts), so the primary key alone answers a match. */
  @PrimaryColumn({ type: 'varchar', length: 1 })
  field: SearchField;

  /** FIELD_WEIGHTS of the field (1 for whole-name rows). */
  @Column({ type: 'int', default: 0 })
  weight: number;

  /** The package's popularity boost when last written (search-terms.ts popularityBoost). */
  @Column({ type: 'int', default: 0 })
  boost: number;

  /** 1 when the package's publisher is verified. */
  @Column({ type: 'int', default: 0 })
  verified: number;

  /** weight × boost × verification factor (search-terms.ts storedScore): candidates of a word are read in this order. */
  @Column({ type: 'int', default: 0 })
  score: number;

  /** A copy of the package's visibility, so candidate reads skip packages nobody else may list. */
  @Column({ type: 'varchar', length: 10, default: 'public' })
  visibility: string;
}
