/**
 * Search accuracy benchmark (issue 4): how often the fast search path (candidates read in index
 * order, ranked exactly) answers the same first page as the exact ranking (one SQL statement over
 * every match), over the discovery benchmark's data and query mix. Prints agreement, total counts
 * and the time of each path, with a few disagreements.
 *
 * Needs the discovery data in a MySQL database kept by `BENCH_KEEP=1 BENCH_ENGINES=mysql
 * BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/toolbox_bench node dist/bench/discovery.js`, then:
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/toolbox_bench node dist/bench/search-accuracy.js
 */
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { ANONYMOUS } from '../src/modules/registry/caller.js';
import { parseQuery } from '../src/modules/search/search-terms.js';
import { SearchService } from '../src/modules/search/search.service.js';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { RegistryAppModule, registryHttpAppOptions } from '../src/apps/registry.app-module.js';
import { generateDiscoveryData, searchQueries } from './support/discovery-data.js';

const SEARCH_SAMPLES = 400;

async function main(): Promise<void> {
  const databaseUrl = process.env.BENCH_MYSQL_URL;
  if (!databaseUrl)
    throw new Error('Set BENCH_MYSQL_URL to the database kept by the discovery benchmark (BENCH_KEEP=1)');
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-accuracy-'));
  const config = loadConfig({
    PLATFORM_JWT_SECRET: 'bench-secret-0123456789abcdefghijklmnop',
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: databaseUrl,
  });
  const app = await createHttpApp(RegistryAppModule.forRoot(config), {
    ...registryHttpAppOptions(config),
    logger: false,
  });
  try {
    const search = app.get(SearchService);
    const data = generateDiscoveryData(Number(process.env.BENCH_PACKAGES ?? 100_000));
    const queries = [...new Set(searchQueries(data, SEARCH_SAMPLES))].filter((query) => query.trim() !== '');
    // Per shape of query: one word, several words, a package name (holds `-`, `_` or a capital).
    const shapes = new Map<string, { queries: number; samePage: number; sameTop5: number }>();
    const shapeOf = (query: string) =>
      /[-_.]|[A-Z]/.test(query) ? 'package name or part' : query.trim().includes(' ') ? 'several words' : 'one word';
    let samePage = 0;
    let sameTop5 = 0;
    let sameTotal = 0;
    let fastMs = 0;
    let exactMs = 0;
    const disagreements: string[] = [];
    for (const query of queries) {
      const request = { query, page: 1, perPage: 20 };
      let started = performance.now();
      const fast = await search.search(ANONYMOUS, request);
      fastMs += performance.now() - started;
      started = performance.now();
      const exact = await search.exactRanked(ANONYMOUS, request, parseQuery(query));
      exactMs += performance.now() - started;
      const fastNames = fast.hits.map((hit) => hit.pkg.name);
      const exactNames = exact.hits.map((hit) => hit.pkg.name);
      const shape = shapes.get(shapeOf(query)) ?? { queries: 0, samePage: 0, sameTop5: 0 };
      shapes.set(shapeOf(query), shape);
      shape.queries += 1;
      if (fastNames.join() === exactNames.join()) {
        samePage += 1;
        shape.samePage += 1;
      } else if (disagreements.length < 5)
        disagreements.push(
          `${JSON.stringify(query)}: fast ${fastNames.slice(0, 8).join(' ')} … / exact ${exactNames.slice(0, 8).join(' ')} …`,
        );
      if (fastNames.slice(0, 5).join() === exactNames.slice(0, 5).join()) {
        sameTop5 += 1;
        shape.sameTop5 += 1;
      }
      if (fast.total === Math.min(exact.total, 1_000)) sameTotal += 1;
    }
    const percent = (count: number) => `${((100 * count) / queries.length).toFixed(1)} %`;
    console.log(`| measure | value |\n|---|---|`);
    console.log(`| distinct non-empty queries | ${queries.length} |`);
    console.log(`| same first page (20) as the exact ranking | ${samePage} (${percent(samePage)}) |`);
    console.log(`| same top 5 | ${sameTop5} (${percent(sameTop5)}) |`);
    console.log(`| same total (exact up to 1,000) | ${sameTotal} (${percent(sameTotal)}) |`);
    for (const [name, shape] of [...shapes].sort()) {
      console.log(
        `| ${name}: queries, same page, same top 5 | ${shape.queries}, ${shape.samePage} (${((100 * shape.samePage) / shape.queries).toFixed(1)} %), ${shape.sameTop5} (${((100 * shape.sameTop5) / shape.queries).toFixed(1)} %) |`,
      );
    }
    console.log(
      `| mean time, fast path / exact ranking | ${(fastMs / queries.length).toFixed(1)} ms / ${(exactMs / queries.length).toFixed(1)} ms |`,
    );
    if (disagreements.length > 0) console.log(`\nSome disagreements:\n${disagreements.join('\n')}`);
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
