import type { PackageEntity } from './entities/package.entity.js';
import type { PublisherEntity } from './entities/publisher.entity.js';

/*
 * What other modules read of the registry's records: shapes, not the TypeORM classes, so a module that only shows
 * or indexes registry data depends on the fields it reads and never on the tables.
 */

/** A publisher as another module shows it: who owns something and whether that owner is verified. */
export type PublisherSummary = Pick<PublisherEntity, 'id' | 'name' | 'displayName' | 'verificationStatus'>;

/** A package as the search index reads it. */
export type PackageSummary = Pick<
  PackageEntity,
  | 'id'
  | 'name'
  | 'displayName'
  | 'description'
  | 'keywords'
  | 'visibility'
  | 'publisherId'
  | 'packageType'
  | 'totalDownloads'
>;
