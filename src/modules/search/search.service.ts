import { Inject, Injectable, Logger, Optional, type OnModuleInit } from '@nestjs/common';
import { LocalMessageBroker, MESSAGE_BROKER, type MessageBroker } from '../../broker/index.js';
import { PlatformError } from '../../common/errors.js';
import { offsetOf } from '../../common/pagination.js';
import {
  type Caller,
  PackageCatalogRepository,
  type PackageEntity,
  type PackageType,
  type PublisherEntity,
  RegistryEvents,
} from '../registry/index.js';
import { CountCache } from './count-cache.js';
import { SEARCH_ENGINE, type SearchEngine } from './engines/search-engine.js';
import { PREFIX_MIN_LENGTH, QUERY_MAX_LENGTH, parseQuery, words } from './search-terms.js';

export interface SearchRequest {
  query: string;
  page: number;
  perPage: number;
  packageType?: PackageType;
}

export interface SearchHit {
  pkg: PackageEntity;
  publisher: PublisherEntity | null;
  verified: boolean;
}

export interface SearchPage {
  hits: SearchHit[];
  total: number;
}

/**
 * How long a create, delete or visibility change whose announcement was lost can go unseen in the empty
 * query's total (CountCache): re-counted in the background after 5 s, at the latest after 30 s. Every change
 * is announced to every registry process (other nodes through Redis, other workers through the primary), so
 * it normally shows at once everywhere.
 */
const PUBLIC_COUNT_LIFETIMES = { freshMs: 5_000, staleMs: 30_000 };
/** Broker topic on which registry processes tell each other that the public package count changed. */
const PUBLIC_COUNT_TOPIC = 'search.public-count';

/**
 * Search and autocomplete over the database's full-text engine (SearchEngine: SQLite FTS5, MySQL/
 * MariaDB Mroonga or InnoDB FULLTEXT; docs/search.md). A query's page is the engine's exact ranking:
 * one statement orders every match the caller may see (exact name, then names starting with the
 * query, then the rest; relevance × popularity × verification; downloads; name) and counts them.
 * The empty query lists every visible package by downloads, from the registry's tables.
 */
@Injectable()
export class SearchService implements OnModuleInit {
  /** Public packages per package type ('' for all), the bulk of the empty query's total. */
  private readonly publicCounts = new CountCache(PUBLIC_COUNT_LIFETIMES);

  constructor(
    @Inject(SEARCH_ENGINE) private readonly engine: SearchEngine,
    private readonly catalog: PackageCatalogRepository,
    private readonly events: RegistryEvents,
    @Optional() @Inject(MESSAGE_BROKER) private readonly broker: MessageBroker = new LocalMessageBroker(),
  ) {}

  async onModuleInit(): Promise<void> {
    // Create, update (visibility, type) and version changes all announce packageChanged; delete its own event.
    // Awaited by the change (RegistryEvents awaits listeners), so other nodes are told before the client hears back.
    const invalidate = () => {
      this.publicCounts.invalidate();
      return this.broker.publish(PUBLIC_COUNT_TOPIC, null).catch((error: unknown) => {
        new Logger('SearchService').warn(`could not announce a count change to the other processes: ${String(error)}`);
      });
    };
    this.events.onPackageChanged(invalidate);
    this.events.onPackageDeleted(invalidate);
    await this.broker.subscribe(PUBLIC_COUNT_TOPIC, () => this.publicCounts.invalidate());
  }

  async search(caller: Caller, request: SearchRequest): Promise<SearchPage> {
    refuseLongQuery(request.query);
    if (request.query.trim() === '') return this.popular(caller, request);
    const parsed = parseQuery(request.query);
    if (!parsed.name && parsed.terms.length === 0) return { hits: [], total: 0 };
    const { ids, total } = await this.engine.search({
      terms: parsed.terms,
      name: parsed.name,
      viewerPublisherId: caller.publisherId,
      packageType: request.packageType,
      offset: offsetOf(request.page, request.perPage),
      limit: request.perPage,
    });
    return { hits: await this.hydrate(ids), total };
  }

  /** Names that complete `prefix`: whole-name prefixes first, then names with a word that starts with it. */
  async suggest(caller: Caller, prefix: string, limit: number): Promise<string[]> {
    refuseLongQuery(prefix);
    const { name } = parseQuery(prefix);
    const firstWord = words(prefix)[0];
    const wordPrefix = firstWord && Array.from(firstWord).length >= PREFIX_MIN_LENGTH ? firstWord : null;
    if (!name && !wordPrefix) return [];
    return this.engine.suggest({ name, wordPrefix, viewerPublisherId: caller.publisherId, limit });
  }

  /** An empty query: every visible package, most downloaded first. */
  private async popular(caller: Caller, request: SearchRequest): Promise<SearchPage> {
    const [total, ids] = await Promise.all([
      this.countSearchable(caller, request.packageType),
      this.catalog.popularSearchableIds(caller, request.packageType, request.page, request.perPage),
    ]);
    return { hits: await this.hydrate(ids), total };
  }

  /**
   * What the empty query lists, counted: the public packages (cached, see CountCache) plus the
   * caller's own private ones (few, read through the publisher index). Unlisted packages are never listed.
   */
  private async countSearchable(caller: Caller, packageType: PackageType | undefined): Promise<number> {
    const [publicCount, ownPrivateCount] = await Promise.all([
      this.publicCounts.get(packageType ?? '', () => this.catalog.countPublic(packageType)),
      caller.publisherId ? this.catalog.countPrivateOf(caller.publisherId, packageType) : Promise.resolve(0),
    ]);
    return publicCount + ownPrivateCount;
  }

  /** Full rows for one page of ids, in the given order. */
  private async hydrate(ids: string[]): Promise<SearchHit[]> {
    if (ids.length === 0) return [];
    const { packages, publishers: publisherRows } = await this.catalog.packagesWithPublishers(ids);
    const publishers = new Map(publisherRows.map((publisher) => [publisher.id, publisher]));
    const byId = new Map(packages.map((pkg) => [pkg.id, pkg]));
    return ids.flatMap((id) => {
      const pkg = byId.get(id);
      if (!pkg) return []; // deleted between the two queries
      const publisher = publishers.get(pkg.publisherId) ?? null;
      return [{ pkg, publisher, verified: publisher?.verificationStatus === 'verified' }];
    });
  }
}

function refuseLongQuery(query: string): void {
  if (query.length <= QUERY_MAX_LENGTH) return;
  throw new PlatformError('UNPROCESSABLE_ENTITY', `q is longer than ${QUERY_MAX_LENGTH} characters`, [
    { field: 'q', message: `must be at most ${QUERY_MAX_LENGTH} characters` },
  ]);
}
