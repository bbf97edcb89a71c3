import type { PackageType } from '../../registry/index.js';
import type { QueryTerm } from '../search-terms.js';

/** What the search index holds of one package: its text, and what ranking and visibility read. */
export interface SearchDocument {
  packageId: string;
  name: string;
  displayName: string | null;
  description: string | null;
  keywords: readonly string[] | null;
  visibility: string;
  publisherId: string;
  packageType: string;
  totalDownloads: number;
  verified: boolean;
}

/** One page of a ranked search, as the engine asks for it. */
export interface EngineQuery {
  /** Normalized query words (search-terms.ts parseQuery); only the last one may be a prefix. */
  terms: QueryTerm[];
  /** The lower-cased query when it could be (the start of) a package name: the name tiers. */
  name: string | null;
  /** The caller's publisher: its private packages are searchable to it. */
  viewerPublisherId: string | null;
  packageType?: PackageType;
  offset: number;
  limit: number;
}

export interface EnginePage {
  /** Package ids of the page, in ranking order. */
  ids: string[];
  /** Every match the caller may see, counted exactly. */
  total: number;
}

export interface EngineSuggest {
  /** Lower-cased whole text, when it could be the start of a name. */
  name: string | null;
  /** A word (2+ characters) names are completed by. */
  wordPrefix: string | null;
  viewerPublisherId: string | null;
  limit: number;
}

/**
 * The search index over a full-text engine (docs/search.md). Ranking, in one statement over every
 * match: exact name, then names starting with the query, then the rest; within a tier the engine's
 * relevance × popularity boost × verification factor; then downloads, then name. Visibility (public,
 * plus the viewer's own private packages; never unlisted) and the package type are filtered in the
 * same statement. The database's own engines and a dedicated server (a Groonga server; a Meilisearch or
 * OpenSearch driver would be another) implement it.
 */
export interface SearchEngine {
  /** Which engine answers, for the start-up log and the docs (`SQLite FTS5`, `MariaDB Mroonga`, …). */
  readonly label: string;
  /** Adds or replaces the packages' documents. */
  upsert(documents: SearchDocument[]): Promise<void>;
  remove(packageId: string): Promise<void>;
  /** The downloads tie-break and popularity boost follow the package's count. */
  setDownloads(packageId: string, totalDownloads: number): Promise<void>;
  /** A publisher was verified or lost it: its packages' verification factor follows. */
  setPublisherVerified(publisherId: string, verified: boolean): Promise<void>;
  search(query: EngineQuery): Promise<EnginePage>;
  /** Names completing the prefix: whole-name prefixes first, then by downloads, then name. */
  suggest(query: EngineSuggest): Promise<string[]>;
  /**
   * The engine's relevance of every document the words match, unfiltered and unsorted: what the
   * contract spec and bench/search-accuracy rank independently (in JS) to check `search`.
   */
  matchRelevance(terms: EngineQuery['terms']): Promise<Map<string, number>>;
  /**
   * An SQL condition over `p` (the packages table) true when the package has no document; null for an
   * engine outside the database, whose documents are all indexed again at start-up.
   */
  missingDocumentSql(): string | null;
  /** An engine outside the database: the package ids it holds documents of (orphans are removed at start-up). */
  documentIds?(): Promise<string[]>;
}

export const SEARCH_ENGINE = Symbol('SearchEngine');
