import { Module } from '@nestjs/common';
import { RegistryModule } from '../registry/registry.module.js';
import { LatestVersionsController } from './latest-versions.controller.js';
import { LatestVersionsService } from './latest-versions.service.js';
import { SearchIndexService } from './search-index.service.js';
import { SearchController } from './search.controller.js';
import { SearchService } from './search.service.js';

/**
 * Package discovery (issue 4): full-text search and autocomplete over the module's own term index,
 * and batch latest-version lookups for update checks.
 */
@Module({
  imports: [RegistryModule],
  controllers: [SearchController, LatestVersionsController],
  providers: [SearchIndexService, SearchService, LatestVersionsService],
  exports: [SearchIndexService, SearchService, LatestVersionsService],
})
export class SearchModule {}
