import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { Caller } from '../registry/index.js';
import { ApiErrors } from '../../common/openapi.js';
import { SearchQuery, SuggestQuery } from './search.dto.js';
import { SearchResponseDto } from './search.responses.js';
import { SearchService } from './search.service.js';
import { searchResponseView } from './search.views.js';

@ApiTags('search')
@Controller('api/v1/search')
export class SearchController {
  constructor(private readonly search: SearchService) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'Search packages',
    description:
      "Exact name match first, then names starting with the query, then full-text relevance over name, display name, keywords and description (the database's own engine: SQLite FTS5, MySQL/MariaDB Mroonga or InnoDB FULLTEXT), multiplied by a popularity boost and 1.2 for verified publishers; then downloads, then name. Only the last word matches as a prefix. Anonymous callers see public packages; an authenticated caller also its own publisher's private ones. Unlisted packages are never listed. " +
      'Every page is the exact ranking and `total` counts every match.',
  })
  @ApiOkResponse({ type: SearchResponseDto })
  @ApiErrors({ 400: 'Invalid page, per_page or package_type', 422: 'q longer than 1000 characters' })
  async find(@CurrentCaller() caller: Caller, @Query() query: SearchQuery) {
    const { hits, total } = await this.search.search(caller, {
      query: query.q,
      page: query.page,
      perPage: query.per_page,
      packageType: query.package_type,
    });
    return searchResponseView(hits, total, query.q, query.page, query.per_page);
  }

  @Get(['suggest', 'suggestions'])
  @Public()
  @ApiOperation({
    summary: 'Package names that complete a prefix (most downloaded first)',
    description: '`sea` finds `searchable`; names whose words start with the prefix follow whole-name matches.',
  })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'string' }, example: ['searchable', 'search-tools'] } })
  @ApiErrors({ 400: 'limit outside 1–20' })
  async suggest(@CurrentCaller() caller: Caller, @Query() query: SuggestQuery): Promise<string[]> {
    return this.search.suggest(caller, query.q, query.limit);
  }
}
