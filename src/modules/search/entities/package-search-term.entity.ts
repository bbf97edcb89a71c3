import { Entity, PrimaryColumn } from 'typeorm';
import type { SearchField } from '../search-terms.js';

/**
 * One normalized word of a package, per field it appears in. Owned by the Search module and kept
 * in step with the registry's writes through RegistryEvents; visibility, downloads and verification
 * are read from their own tables at query time, so a lagging index can never reveal a package.
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
}
