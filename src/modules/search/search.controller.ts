import { Controller, Get, Query } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnprocessableEntityResponse } from '@nestjs/swagger';
import { Public } from '../../auth/access.decorators.js';
import { CurrentCaller } from '../../auth/current-caller.decorator.js';
import type { Caller } from '../registry/caller.js';
import { packageListItem } from '../registry/registry.views.js';
import { SearchQuery, SuggestQuery } from './search.dto.js';
import { SearchService } from './search.service.js';

const SEARCH_ITEM_EXAMPLE = {
  name: 'CloudM',
  display_name: 'Cloud M',
  description: 'Cloud storage for ToolBox',
  latest_version: '1.2.0',
  total_downloads: 1520,
  downloads: 1520,
  package_type: 'mod',
  visibility: 'public',
  publisher: { name: 'toolbox-team', display_name: 'ToolBox Team', verified: true },
  verified: true,
};

@ApiTags('search')
@Controller('api/v1/search')
export class SearchController {
  constructor(
    private readonly search: SearchService,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'Search packages',
    description:
      'Exact name match first, then names starting with the query, then text relevance over name, display name, keywords and description, blended with downloads and a boost for verified publishers. Anonymous callers see public packages; an authenticated caller also its own publisher\'s. Unlisted packages are never listed. ' +
      'For a query that matches more packages than the few hundred best candidates of each word, the ranking is exact among those candidates and `total` counts matches up to 1,000 (a query reporting 1,000 may match more); smaller result sets, an empty q and a package_type filter are ranked and counted exactly.',
  })
  @ApiOkResponse({ schema: { example: { results: [SEARCH_ITEM_EXAMPLE], packages: [SEARCH_ITEM_EXAMPLE], total: 1, query: 'cloud', page: 1, per_page: 20 } } })
  @ApiBadRequestResponse({ description: 'Invalid page, per_page or package_type' })
  @ApiUnprocessableEntityResponse({ description: 'q longer than 1000 characters' })
  async find(@CurrentCaller() caller: Caller, @Query() query: SearchQuery) {
    const { hits, total } = await this.search.search(caller, { query: query.q, page: query.page, perPage: query.per_page, packageType: query.package_type });
    const results = hits.map(({ pkg, publisher, verified }) => ({ ...packageListItem(pkg, publisher), verified }));
    return { results, packages: results, total, query: query.q, page: query.page, per_page: query.per_page };
  }

  @Get(['suggest', 'suggestions'])
  @Public()
  @ApiOperation({ summary: 'Package names that complete a prefix (most downloaded first)', description: '`sea` finds `searchable`; names whose words start with the prefix follow whole-name matches.' })
  @ApiOkResponse({ schema: { type: 'array', items: { type: 'string' }, example: ['searchable', 'search-tools'] } })
  @ApiBadRequestResponse({ description: 'limit outside 1–20' })
  async suggest(@CurrentCaller() caller: Caller, @Query() query: SuggestQuery): Promise<string[]> {
    return this.search.suggest(caller, query.q, query.limit);
  }
}
