import { packageListItem } from '../registry/index.js';
import type { LatestVersions } from './latest-versions.service.js';
import type { LatestVersionsDto, SearchResponseDto } from './search.responses.js';
import type { SearchHit } from './search.service.js';

export function searchResponseView(
  hits: SearchHit[],
  total: number,
  query: string,
  page: number,
  perPage: number,
): SearchResponseDto {
  const results = hits.map(({ pkg, publisher, verified }) => ({ ...packageListItem(pkg, publisher), verified }));
  return { results, packages: results, total, query, page, per_page: perPage };
}

export function latestVersionsView(
  versions: LatestVersions,
  listing?: { total: number; page: number; perPage: number },
): LatestVersionsDto {
  return listing ? { versions, total: listing.total, page: listing.page, per_page: listing.perPage } : { versions };
}
