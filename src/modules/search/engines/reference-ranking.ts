import { rankingMultiplier } from '../search-terms.js';
import type { EngineQuery, SearchDocument } from './search-engine.js';

/**
 * The ranking `SearchEngine.search` must return, computed in JS over every document from the
 * documents' own fields and the engine's relevance of each match (SearchEngine.matchRelevance): the
 * independent oracle of the contract spec and bench/search-accuracy.ts. Same rules as the engines'
 * one statement: visible to the viewer, of the type asked for; tier (exact name, name prefix, rest);
 * relevance × popularity boost × verification; downloads; name.
 */
export function referenceRanking(
  documents: readonly SearchDocument[],
  relevance: ReadonlyMap<string, number>,
  query: Pick<EngineQuery, 'name' | 'viewerPublisherId' | 'packageType'>,
): string[] {
  const ranked = documents.flatMap((document) => {
    const visible =
      document.visibility === 'public' ||
      (document.visibility === 'private' && document.publisherId === query.viewerPublisherId);
    if (!visible || (query.packageType && document.packageType !== query.packageType)) return [];
    const nameLower = document.name.toLowerCase();
    const tier = !query.name ? 0 : nameLower === query.name ? 2 : nameLower.startsWith(query.name) ? 1 : 0;
    const matched = relevance.get(document.packageId);
    if (matched === undefined && tier === 0) return [];
    const score = (matched ?? 0) * rankingMultiplier(document.totalDownloads, document.verified);
    return [{ id: document.packageId, tier, score, downloads: document.totalDownloads, nameLower }];
  });
  ranked.sort(
    (a, b) =>
      b.tier - a.tier ||
      b.score - a.score ||
      b.downloads - a.downloads ||
      (a.nameLower < b.nameLower ? -1 : a.nameLower > b.nameLower ? 1 : 0),
  );
  return ranked.map((entry) => entry.id);
}
