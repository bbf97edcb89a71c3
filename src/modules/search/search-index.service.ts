import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import cluster from 'node:cluster';
import { inClusterWorker } from '../../cluster/cluster-bus.js';
import { PackageCatalogRepository, type PackageSummary, PackagesService, RegistryEvents } from '../registry/index.js';
import { SEARCH_ENGINE, type SearchDocument, type SearchEngine } from './engines/search-engine.js';

const PACKAGES_PER_BATCH = 2000;

/**
 * Keeps the search engine's documents in step with the registry: create, update (text, visibility,
 * type), version upload and delete reach it through RegistryEvents after the registry's own commit, as
 * do download counts (the downloads tie-break and popularity boost) and a publisher's verification
 * granted or revoked. Packages without a document (an empty index after the migration, bulk imports,
 * a listener that failed) are indexed at start-up and by `indexMissing()`. An engine outside the database
 * (a Groonga server) has every package indexed again at start-up, and the documents of packages that no
 * longer exist removed: what changed while it was unreachable is caught up.
 */
@Injectable()
export class SearchIndexService implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('SearchIndex');

  constructor(
    @Inject(SEARCH_ENGINE) private readonly engine: SearchEngine,
    private readonly packages: PackagesService,
    private readonly catalog: PackageCatalogRepository,
    private readonly events: RegistryEvents,
  ) {}

  onModuleInit(): void {
    this.events.onPackageChanged(({ packageId }) => this.reindex(packageId));
    this.events.onPackageDeleted(({ packageId }) => this.remove(packageId));
    this.events.onDownloadCounted(({ packageId, totalDownloads }) =>
      this.engine.setDownloads(packageId, totalDownloads),
    );
    this.events.onPublisherChanged(({ publisherId, verified }) =>
      this.engine.setPublisherVerified(publisherId, verified),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    // In a clustered registry the first worker catches up the index; the others would only collide with it.
    if (inClusterWorker() && cluster.worker?.id !== 1) return;
    const started = Date.now();
    const indexed = await this.indexMissing();
    const removed = await this.removeOrphans();
    const what =
      this.engine.missingDocumentSql() === null
        ? 'packages (every one: the engine is outside the database)'
        : 'packages without a search document';
    if (indexed > 0) this.logger.log(`indexed ${indexed} ${what} in ${Date.now() - started} ms`);
    if (removed > 0) this.logger.log(`removed ${removed} search documents of packages that no longer exist`);
  }

  /** Replaces the package's document with its current row (or removes it when the package is gone). */
  async reindex(packageId: string): Promise<void> {
    const pkg = await this.packages.findById(packageId);
    if (!pkg) return this.remove(packageId);
    await this.engine.upsert(await this.documents([pkg]));
  }

  async remove(packageId: string): Promise<void> {
    await this.engine.remove(packageId);
  }

  /**
   * Removes the documents of packages that no longer exist, for an engine outside the database (the
   * database's own engines delete them with the package); returns how many.
   */
  async removeOrphans(): Promise<number> {
    if (!this.engine.documentIds) return 0;
    const ids = await this.engine.documentIds();
    const existing = await this.catalog.existingPackageIds(ids);
    let removed = 0;
    for (const id of ids.filter((candidate) => !existing.has(candidate))) {
      await this.engine.remove(id);
      removed += 1;
    }
    return removed;
  }

  /**
   * Indexes every package without a document (every package, for an engine outside the database), in id
   * order and batches; returns how many.
   */
  async indexMissing(): Promise<number> {
    let after = '';
    let indexed = 0;
    for (;;) {
      const batch = await this.catalog.indexablePackages(after, PACKAGES_PER_BATCH, this.engine.missingDocumentSql());
      if (batch.length === 0) return indexed;
      await this.engine.upsert(await this.documents(batch));
      indexed += batch.length;
      after = batch[batch.length - 1].id;
    }
  }

  private async documents(packages: PackageSummary[]): Promise<SearchDocument[]> {
    const verified = await this.catalog.verifiedPublisherIds(null, [
      ...new Set(packages.map((pkg) => pkg.publisherId)),
    ]);
    return packages.map((pkg) => ({
      packageId: pkg.id,
      name: pkg.name,
      displayName: pkg.displayName,
      description: pkg.description,
      keywords: pkg.keywords,
      visibility: pkg.visibility,
      publisherId: pkg.publisherId,
      packageType: pkg.packageType,
      totalDownloads: Number(pkg.totalDownloads),
      verified: verified.has(pkg.publisherId),
    }));
  }
}
