// The registry's one entry point for other modules, apps and the CLI: its Nest module, services, events, the
// caller model, response classes and pure helpers. A module that only shows or indexes registry records names a
// shape (registry-shapes.ts); the entities are exported as types only, for code that hands a record back to a
// registry service or maps every field (a service's signature names them). The tables stay the registry's own,
// and the data source (src/database/entities.ts) lists the entity classes from their files.
export { RegistryModule } from './registry.module.js';
export { PackagesService } from './packages.service.js';
export { PackageVersionsService } from './package-versions.service.js';
export { PublishersService, type PublisherStats } from './publishers.service.js';
export { RegistryAccountsService } from './registry-accounts.service.js';
export {
  PackageCatalogRepository,
  type LatestVersionRow,
  type PackageVersionRow,
} from './package-catalog.repository.js';
export { RegistryEvents } from './registry-events.js';
export { owns, type Caller } from './caller.js';
export { isVisible } from './package-visibility.js';
export { pickLatestVersion } from './latest-version.js';
export {
  PACKAGE_TYPES,
  VERIFICATION_STATUSES,
  type PackageType,
  type VerificationStatus,
} from './registry-vocabulary.js';
export { NAME_PATTERN } from './registry.dto.js';
export { PackageListItemDto, PublisherDto, PublisherRefDto } from './registry.responses.js';
export { packageListItem, publisherRef, publisherView } from './registry.views.js';
export type { PackageSummary, PublisherSummary } from './registry-shapes.js';
export type { PackageEntity } from './entities/package.entity.js';
export type { PackageVersionEntity } from './entities/package-version.entity.js';
export type { PublisherEntity } from './entities/publisher.entity.js';
