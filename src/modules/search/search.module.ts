import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { SearchConfig } from '../../config/config.js';
import { SEARCH_CONFIG } from '../../config/config.module.js';
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
      inject: [DataSource, SEARCH_CONFIG],
      useFactory: (dataSource: DataSource, search: SearchConfig) =>
        createSearchEngine(dataSource, {
          mroongaRanking: search.mroongaRanking,
          engine: search.engine,
          groongaUrl: search.groongaUrl,
        }),
    },
    SearchIndexService,
    SearchService,
    LatestVersionsService,
  ],
  exports: [SearchIndexService, SearchService, LatestVersionsService],
})
export class SearchModule {}
