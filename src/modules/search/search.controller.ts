import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { Caller } from '../registry/caller.js';
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
      "Exact name match first, then names starting with the query, then text relevance over name, display name, keywords and description, blended with downloads and a boost for verified publishers. Anonymous callers see public packages; an authenticated caller also its own publisher's. Unlisted packages are never listed. " +
      'For a query that matches more packages than the few hundred best candidates of each word, the ranking is exact among those candidates and `total` counts matches up to 1,000 (a query reporting 1,000 may match more); smaller result sets, an empty q and a package_type filter are ranked and counted exactly.',
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
