import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import cluster from 'node:cluster';
import { DataSource, type EntityManager } from 'typeorm';
import { inClusterWorker } from '../../cluster/cluster-bus.js';
import { SqlDialect } from '../../database/sql-dialect.js';
import { PackageCatalogRepository } from '../registry/package-catalog.repository.js';
import { PackagesService } from '../registry/packages.service.js';
import { RegistryEvents } from '../registry/registry-events.js';
import {
  SEARCH_FIELDS,
  documentTerms,
  indexWeight,
  popularityBoost,
  storedScore,
  verificationFactor,
  verificationFactorSql,
  type DocumentTerm,
  type SearchableDocument,
} from './search-terms.js';

const TERMS_TABLE = 'package_search_terms';
const VOCABULARY_TABLE = 'package_search_vocabulary';
/** The fields whose words a query prefix expands to (the vocabulary's words). */
const VOCABULARY_FIELDS: ReadonlySet<string> = new Set([
  SEARCH_FIELDS.nameWord,
  SEARCH_FIELDS.displayName,
  SEARCH_FIELDS.keyword,
  SEARCH_FIELDS.description,
]);
const WORDS_PER_INSERT = 1000;
// 8 parameters a row: 1,000 rows stay below SQLite's 32,766 and MySQL's 65,535 placeholders.
const ROWS_PER_INSERT = 1000;
const PACKAGES_PER_BATCH = 1000;

interface IndexedPackage extends SearchableDocument {
  id: string;
  visibility: string;
  totalDownloads: number | string;
  publisherId: string;
}

/**
 * Keeps `package_search_terms` in step with the registry: every create, update (description,
 * keywords, display name) and delete reaches it through RegistryEvents, after the registry's own
 * commit. Packages that have no terms yet (data from before this index, bulk imports, a listener
 * that failed) are indexed at start-up and by `indexMissing()`. The words of the text fields are
 * also added to `package_search_vocabulary`, which query prefixes are expanded against.
 */
@Injectable()
export class SearchIndexService implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('SearchIndex');

  constructor(
    private readonly dataSource: DataSource,
    private readonly packages: PackagesService,
    private readonly catalog: PackageCatalogRepository,
    private readonly events: RegistryEvents,
  ) {}

  /** Last popularity boost written per package, so a download only writes when it crosses a power of ten. */
  private readonly knownBoosts = new Map<string, number>();

  onModuleInit(): void {
    this.events.onPackageChanged(({ packageId }) => this.reindex(packageId));
    this.events.onPackageDeleted(({ packageId }) => this.remove(packageId));
    this.events.onDownloadCounted(({ packageId, totalDownloads }) => this.refreshBoost(packageId, totalDownloads));
    this.events.onPublisherChanged(({ publisherId, verified }) => this.refreshVerified(publisherId, verified));
  }

  async onApplicationBootstrap(): Promise<void> {
    // In a clustered registry the first worker catches up the index; the others would only collide with it.
    if (inClusterWorker() && cluster.worker?.id !== 1) return;
    const indexed = await this.indexMissing();
    if (indexed > 0) this.logger.log(`indexed ${indexed} packages that had no search terms`);
    await this.refreshStatistics();
  }

  /**
   * Without statistics SQLite guesses that `visibility = 'public'` is selective and scans every
   * package instead of the few that match (see SqlDialect.refreshStatisticsStatements).
   */
  async refreshStatistics(): Promise<void> {
    for (const statement of SqlDialect.of(this.dataSource).refreshStatisticsStatements())
      await this.dataSource.query(statement);
  }

  /** Replaces the package's terms with those of its current row (or removes them when it is gone). */
  async reindex(packageId: string): Promise<void> {
    const pkg = await this.packages.findById(packageId);
    if (!pkg) {
      await this.remove(packageId);
      return;
    }
    const words = await this.dataSource.transaction(async (manager) => {
      await manager.query(`DELETE FROM ${TERMS_TABLE} WHERE package_id = ?`, [packageId]);
      return this.insertTerms(manager, [pkg]);
    });
    await this.addVocabulary(words);
  }

  /**
   * Keeps the stored popularity boost (and so the score) of a package's rows in step with its
   * downloads. The boost moves only at powers of ten, so nearly every call is a lookup in memory;
   * otherwise one UPDATE that changes nothing when another process already wrote the same boost.
   */
  async refreshBoost(packageId: string, totalDownloads: number): Promise<void> {
    const boost = popularityBoost(totalDownloads);
    if (this.knownBoosts.get(packageId) === boost) return;
    await this.dataSource.query(
      `UPDATE ${TERMS_TABLE} SET boost = ?, score = weight * ? * ${verificationFactorSql('verified = 1')}
       WHERE package_id = ? AND boost <> ?`,
      [boost, boost, packageId, boost],
    );
    if (this.knownBoosts.size >= 100_000) this.knownBoosts.clear();
    this.knownBoosts.set(packageId, boost);
  }

  /** A publisher was verified or lost it: the stored scores of its packages' rows follow. */
  async refreshVerified(publisherId: string, verified: boolean): Promise<void> {
    const flag = verified ? 1 : 0;
    await this.dataSource.query(
      `UPDATE ${TERMS_TABLE} SET verified = ?, score = weight * boost * ? WHERE verified <> ? AND package_id IN (${this.catalog.packageIdsOfPublisherSql})`,
      [flag, verificationFactor(verified), flag, publisherId],
    );
  }

  async remove(packageId: string): Promise<void> {
    this.knownBoosts.delete(packageId);
    await this.dataSource.query(`DELETE FROM ${TERMS_TABLE} WHERE package_id = ?`, [packageId]);
  }

  /** Indexes every package without terms, in id order and batches; returns how many. */
  async indexMissing(): Promise<number> {
    let after = '';
    let indexed = 0;
    for (;;) {
      const batch: IndexedPackage[] = await this.catalog.indexablePackages(
        after,
        PACKAGES_PER_BATCH,
        `NOT EXISTS (SELECT 1 FROM ${TERMS_TABLE} t WHERE t.package_id = p.id)`,
      );
      if (batch.length === 0) {
        if (indexed > 0) await this.refreshStatistics();
        return indexed;
      }
      await this.addVocabulary(await this.dataSource.transaction((manager) => this.insertTerms(manager, batch)));
      indexed += batch.length;
      after = batch[batch.length - 1].id;
    }
  }

  /** Writes the packages' index rows; returns the words the vocabulary must hold for them. */
  private async insertTerms(manager: EntityManager, packages: IndexedPackage[]): Promise<string[]> {
    const rows: Array<[DocumentTerm, IndexedPackage, number]> = [];
    const words = new Set<string>();
    const verified = await this.catalog.verifiedPublisherIds(manager, [
      ...new Set(packages.map((pkg) => pkg.publisherId)),
    ]);
    for (const pkg of packages) {
      const boost = popularityBoost(Number(pkg.totalDownloads));
      this.knownBoosts.set(pkg.id, boost);
      for (const term of documentTerms(pkg)) {
        rows.push([term, pkg, boost]);
        if (VOCABULARY_FIELDS.has(term.field)) words.add(term.term);
      }
    }
    // Plain multi-row INSERTs: the rebuild of a large registry spends its time here, not in the ORM.
    for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
      const chunk = rows.slice(start, start + ROWS_PER_INSERT);
      const placeholders = chunk.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
      const parameters = chunk.flatMap(([term, pkg, boost]) => {
        const weight = indexWeight(term.field);
        const isVerified = verified.has(pkg.publisherId);
        return [
          term.term,
          pkg.id,
          term.field,
          weight,
          boost,
          isVerified ? 1 : 0,
          storedScore(weight, boost, isVerified),
          pkg.visibility,
        ];
      });
      await manager.query(
        `INSERT INTO ${TERMS_TABLE} (term, package_id, field, weight, boost, verified, score, visibility) VALUES ${placeholders}`,
        parameters,
      );
    }
    return [...words];
  }

  /**
   * Adds the words the vocabulary lacks, after the index rows are committed (so a concurrent writer
   * never waits on them), in sorted order so two writers take their locks in the same order; a
   * deadlock or lock timeout is tried again. A word that is still missing only limits prefix matches:
   * a query word is always read as itself.
   */
  private async addVocabulary(words: string[]): Promise<void> {
    const sorted = [...words].sort();
    const ignore = SqlDialect.of(this.dataSource).insertIgnore();
    for (let start = 0; start < sorted.length; start += WORDS_PER_INSERT) {
      const chunk = sorted.slice(start, start + WORDS_PER_INSERT);
      const statement = `${ignore} INTO ${VOCABULARY_TABLE} (term) VALUES ${chunk.map(() => '(?)').join(', ')}`;
      for (let attempt = 1; ; attempt += 1) {
        try {
          await this.dataSource.query(statement, chunk);
          break;
        } catch (error) {
          if (attempt >= 3) throw error;
          this.logger.warn(`vocabulary insert failed (${(error as Error).message}); trying again`);
        }
      }
    }
  }
}
