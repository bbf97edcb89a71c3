/**
 * Search accuracy benchmark: whether the page `/search` answers is exactly the ranking
 * computed independently over every package. For each query of the discovery benchmark's mix, the
 * reference ranks all 100,000 packages in JS (engines/reference-ranking.ts: tiers, relevance ×
 * popularity × verification, downloads, name) from the package and publisher rows themselves and the
 * engine's relevance of each match (SearchEngine.matchRelevance); SearchService answers pages 1 and 3
 * (20 per page) with its one ranking statement. Prints agreement of pages and totals, per engine.
 *
 * Run after `npm run build`: `node dist/bench/search-accuracy.js` (SQLite), plus MySQL/MariaDB when
 * BENCH_MYSQL_URL is set (a fresh database, or the kept one with BENCH_KEEP=1; SEARCH_MYSQL_ENGINE=innodb
 * forces InnoDB FULLTEXT). BENCH_ENGINES=sqlite or =mysql runs one; BENCH_PACKAGES overrides 100000.
 */
import 'reflect-metadata';
import { rm } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { ANONYMOUS } from '../src/modules/registry/caller.js';
import { referenceRanking } from '../src/modules/search/engines/reference-ranking.js';
import { SEARCH_ENGINE, type SearchDocument, type SearchEngine } from '../src/modules/search/engines/search-engine.js';
import { SearchIndexService } from '../src/modules/search/search-index.service.js';
import { parseQuery } from '../src/modules/search/search-terms.js';
import { SearchService } from '../src/modules/search/search.service.js';
import { generateDiscoveryData, searchQueries, type DiscoveryData } from './support/discovery-data.js';
import { insertAll, startRegistry, withMysqlDatabase } from './support/discovery-load.js';

const SEARCH_SAMPLES = 400;
const PER_PAGE = 20;

async function measure(engineName: string, databaseUrl: string | undefined, data: DiscoveryData): Promise<void> {
  const { app, dataDir } = await startRegistry(databaseUrl);
  try {
    const dataSource = app.get(DataSource);
    const existing = Number((await dataSource.query('SELECT COUNT(*) AS n FROM packages'))[0].n);
    if (existing !== 0 && existing !== data.packages.length)
      throw new Error(`the database holds ${existing} packages, not ${data.packages.length}: drop it first`);
    if (existing === 0) await insertAll(dataSource, data);
    await app.get(SearchIndexService).indexMissing();
    const engine = app.get<SearchEngine>(SEARCH_ENGINE);
    const search = app.get(SearchService);
    // The reference reads the registry's own rows, not the search documents.
    const rows: Array<Record<string, string | number>> = await dataSource.query(
      `SELECT p.id, p.name, p.visibility, p.publisher_id, p.package_type, p.total_downloads,
              CASE WHEN pub.verification_status = 'verified' THEN 1 ELSE 0 END AS verified
       FROM packages p LEFT JOIN publishers pub ON pub.id = p.publisher_id`,
    );
    const documents: SearchDocument[] = rows.map((row) => ({
      packageId: String(row.id),
      name: String(row.name),
      displayName: null,
      description: null,
      keywords: null,
      visibility: String(row.visibility),
      publisherId: String(row.publisher_id),
      packageType: String(row.package_type),
      totalDownloads: Number(row.total_downloads),
      verified: Number(row.verified) === 1,
    }));
    const queries = [...new Set(searchQueries(data, SEARCH_SAMPLES))].filter((query) => query.trim() !== '');
    let pages = 0;
    let samePages = 0;
    let sameTotals = 0;
    let searchMs = 0;
    const disagreements: string[] = [];
    for (const query of queries) {
      const parsed = parseQuery(query);
      const relevance = await engine.matchRelevance(parsed.terms);
      const reference = referenceRanking(documents, relevance, { name: parsed.name, viewerPublisherId: null });
      for (const page of [1, 3]) {
        const started = performance.now();
        const answer = await search.search(ANONYMOUS, { query, page, perPage: PER_PAGE });
        searchMs += performance.now() - started;
        const ids = answer.hits.map((hit) => hit.pkg.id);
        const expected = reference.slice((page - 1) * PER_PAGE, page * PER_PAGE);
        pages += 1;
        if (ids.join() === expected.join()) samePages += 1;
        else if (disagreements.length < 5) disagreements.push(`${JSON.stringify(query)} page ${page}`);
        if (answer.total === reference.length) sameTotals += 1;
      }
    }
    const percent = (count: number) => `${((100 * count) / pages).toFixed(1)} %`;
    console.log(`\n${engineName}: ${engine.label}`);
    console.log(`| measure | value |\n|---|---|`);
    console.log(`| distinct non-empty queries (pages 1 and 3 each) | ${queries.length} (${pages} pages) |`);
    console.log(`| page equal to the reference ranking | ${samePages} (${percent(samePages)}) |`);
    console.log(`| total equal to the reference count | ${sameTotals} (${percent(sameTotals)}) |`);
    console.log(`| mean search time (service, in-process) | ${(searchMs / pages).toFixed(1)} ms |`);
    if (disagreements.length > 0) console.log(`\nSome disagreements:\n${disagreements.join('\n')}`);
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const data = generateDiscoveryData(Number(process.env.BENCH_PACKAGES ?? 100_000));
  const engines = (process.env.BENCH_ENGINES ?? 'sqlite,mysql').split(',');
  if (engines.includes('sqlite')) await measure('sqlite', undefined, data);
  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  if (mysqlUrl && engines.includes('mysql')) await withMysqlDatabase(mysqlUrl, (url) => measure('mysql', url, data));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
