import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PlatformConfig } from '../../config/config.js';
import { PLATFORM_CONFIG } from '../../config/config.module.js';
import { RegistryModule } from '../registry/index.js';
import { createSearchEngine } from './engines/create-search-engine.js';
import { SEARCH_ENGINE } from './engines/search-engine.js';
import { LatestVersionsController } from './latest-versions.controller.js';
import { LatestVersionsService } from './latest-versions.service.js';
import { SearchIndexService } from './search-index.service.js';
import { SearchController } from './search.controller.js';
import { SearchService } from './search.service.js';

/**
 * Package discovery: full-text search and autocomplete over the database's own
 * full-text engine or a dedicated Groonga server (SearchEngine), and batch latest-version lookups for update checks.
 */
@Module({
  imports: [RegistryModule],
  controllers: [SearchController, LatestVersionsController],
  providers: [
    {
      provide: SEARCH_ENGINE,
      inject: [DataSource, PLATFORM_CONFIG],
      useFactory: (dataSource: DataSource, config: PlatformConfig) =>
        createSearchEngine(dataSource, {
          mroongaRanking: config.search.mroongaRanking,
          engine: config.search.engine,
          groongaUrl: config.search.groongaUrl,
        }),
    },
    SearchIndexService,
    SearchService,
    LatestVersionsService,
  ],
  exports: [SearchIndexService, SearchService, LatestVersionsService],
})
export class SearchModule {}
