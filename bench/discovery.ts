/**
 * Discovery benchmark: generates 100,000 packages (bench/support/discovery-data.ts),
 * bulk-inserts them through TypeORM repositories into a registry started in-process, builds the
 * search index through the Search module's own code path (timed), then measures over HTTP: search
 * latency (p50/p95 over a realistic query mix), a 1,000-name batch latest-versions check, and
 * resolving a 200-package transitive graph. Runs on SQLite, and on MySQL/MariaDB when
 * BENCH_MYSQL_URL is set (a fresh database is created and dropped).
 *
 * The measured registry runs in a process of its own (`tb registry`, one worker, over the loaded database),
 * and so does the HTTP client (bench/support/http-timer.ts), as in production; until 2026-11-26 both ran in
 * this process, the client on the server's own thread. BENCH_SERVER=same-process measures the in-process app
 * and BENCH_CLIENT=same-process runs the client on this thread, for comparison.
 *
 * On MySQL the measurements start once the bulk load has settled (see settleMysql).
 *
 * Run after `npm run build`:
 *   BENCH_MYSQL_URL=mysql://root@127.0.0.1:3306/toolbox_bench node dist/bench/discovery.js
 * BENCH_PACKAGES overrides the package count (default 100000); BENCH_ENGINES=sqlite or =mysql runs one engine.
 * SEARCH_MYSQL_ENGINE=innodb measures MySQL with InnoDB FULLTEXT instead of Mroonga (docs/search.md).
 * BENCH_KEEP=1 keeps the MySQL database under the URL's own name and, on the next run, measures it again
 * without regenerating it (when it holds the same number of packages); for repeated measurements.
 */
import 'reflect-metadata';
import { rm } from 'node:fs/promises';
import { DataSource } from 'typeorm';
import { ANONYMOUS } from '../src/modules/registry/caller.js';
import { SEARCH_ENGINE, type SearchEngine } from '../src/modules/search/engines/search-engine.js';
import { LatestVersionsService } from '../src/modules/search/latest-versions.service.js';
import { SearchIndexService } from '../src/modules/search/search-index.service.js';
import { BENCH_SECRET, insertAll, startRegistry, withMysqlDatabase } from './support/discovery-load.js';
import { startHttpTimer, type HttpTimer, type TimedRequest, type TimedResponse } from './support/http-timer.js';
import { startRegistryProcess, type RegistryProcess } from './support/registry-process.js';
import {
  RESOLVE_GRAPH_SIZE,
  generateDiscoveryData,
  random,
  searchQueries,
  type DiscoveryData,
} from './support/discovery-data.js';

const PACKAGE_COUNT = Number(process.env.BENCH_PACKAGES ?? 100_000);
const SEARCH_SAMPLES = 400;
const WARM_UP_SAMPLES = 200;
const BATCH_SAMPLES = 30;
const RESOLVE_SAMPLES = 30;

interface Row {
  engine: string;
  measure: string;
  p50: number;
  p95: number;
  target: string;
  note: string;
}

function percentile(samples: number[], fraction: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

async function timed<T>(action: () => Promise<T>): Promise<[number, T]> {
  const started = performance.now();
  const result = await action();
  return [performance.now() - started, result];
}

/** The responses, once every one of them is a 200. */
function checked(responses: TimedResponse[]): TimedResponse[] {
  const failed = responses.find((response) => response.status !== 200);
  if (failed) throw new Error(`a request answered ${failed.status}: ${JSON.stringify(failed.body)}`);
  return responses;
}

function times(responses: TimedResponse[]): number[] {
  return checked(responses).map((response) => response.ms);
}

function repeat(request: TimedRequest, count: number): TimedRequest[] {
  return Array.from({ length: count }, () => request);
}

async function runOn(engine: string, databaseUrl: string | undefined, data: DiscoveryData): Promise<Row[]> {
  const { app, baseUrl: inProcessUrl, dataDir } = await startRegistry(databaseUrl);
  let server: Pick<RegistryProcess, 'baseUrl' | 'stop'> | null = null;
  let timer: HttpTimer | null = null;
  try {
    const dataSource = app.get(DataSource);
    const existing = Number((await dataSource.query('SELECT COUNT(*) AS n FROM packages'))[0].n);
    if (existing !== 0 && existing !== data.packages.length)
      throw new Error(`the database holds ${existing} packages, not ${data.packages.length}: drop it first`);
    const [insertMs] = existing === 0 ? await timed(() => insertAll(dataSource, data)) : [0];
    const [indexMs, indexed] = await timed(() => app.get(SearchIndexService).indexMissing());
    const searchEngine = app.get<SearchEngine>(SEARCH_ENGINE);
    const documents = Number((await dataSource.query('SELECT COUNT(*) AS n FROM package_search_documents'))[0].n);
    console.log(
      `${engine}: inserted ${data.packages.length} packages in ${(insertMs / 1000).toFixed(1)} s; ${searchEngine.label} indexed ${indexed} (${documents} documents) in ${(indexMs / 1000).toFixed(1)} s`,
    );
    if (engine === 'mysql') {
      const settleMs = await settleMysql(dataSource);
      console.log(`${engine}: settled (purge done, statistics analyzed) in ${(settleMs / 1000).toFixed(1)} s`);
    }
    // The app above loaded and indexed the data; the measured registry is a process of its own over the same
    // database (BENCH_SERVER=same-process measures the app above, in this process, as before 2026-11-26).
    server =
      process.env.BENCH_SERVER === 'same-process'
        ? { baseUrl: inProcessUrl, stop: async () => undefined }
        : await startRegistryProcess({
            dataDir,
            secret: BENCH_SECRET,
            env: databaseUrl ? { DATABASE_URL: databaseUrl } : {},
          });
    const baseUrl = server.baseUrl;
    timer = await startHttpTimer();

    // A server in use has compiled its hot paths: each route is warmed up first, with queries of another
    // seed. Then one package is reindexed (a write, as any update or download makes; from this process, so
    // a registry process sees another connection's commit), so the engine's kept word counts start empty
    // and no measured query profits from a cache the warm-up filled.
    const queries = searchQueries(data, SEARCH_SAMPLES);
    const warmUp = searchQueries(data, WARM_UP_SAMPLES, 1234);
    const searchUrl = (query: string) => `${baseUrl}/api/v1/search?q=${encodeURIComponent(query)}`;
    const suggestUrl = (query: string) =>
      `${baseUrl}/api/v1/search/suggest?q=${encodeURIComponent(query.slice(0, 4) || 'a')}&limit=10`;
    checked(
      await timer.run([
        ...repeat({ url: `${baseUrl}/api/v1/health` }, WARM_UP_SAMPLES),
        ...warmUp.map((query) => ({ url: searchUrl(query) })),
        ...warmUp.map((query) => ({ url: suggestUrl(query) })),
      ]),
    );
    await app.get(SearchIndexService).reindex(data.packages[0].id);

    // What any request costs here (routing, guards, JSON), to read the figures below against.
    const baselineTimes = times(await timer.run(repeat({ url: `${baseUrl}/api/v1/health` }, 100)));
    const searchTimes = times(await timer.run(queries.map((query) => ({ url: searchUrl(query) }))));
    // The empty query (every visible package by popularity) on its own: it counts every visible package.
    const emptyQueryTimes = searchTimes.filter((_, index) => queries[index].trim() === '');
    const slowestIndex = searchTimes.indexOf(Math.max(...searchTimes));
    const slowest = { ms: searchTimes[slowestIndex], query: queries[slowestIndex] };
    const suggestTimes = times(await timer.run(queries.slice(0, 200).map((query) => ({ url: suggestUrl(query) }))));

    const rng = random(7);
    const batchTimes: number[] = [];
    // The same lookup in-process, without HTTP, JSON and validation: what the database part costs.
    const batchServiceTimes: number[] = [];
    let reported = 0;
    for (let sample = 0; sample < BATCH_SAMPLES + 3; sample += 1) {
      const names = Array.from({ length: 1000 }, (_, index) =>
        index % 10 === 9 ? `missing-${sample}-${index}` : data.packages[rng.below(data.packages.length)].name,
      );
      const [response] = checked(await timer.run([{ url: `${baseUrl}/api/v1/versions`, body: { names } }]));
      if (sample >= 3) batchTimes.push(response.ms);
      reported = Object.keys((response.body as { versions: object }).versions).length;
      const [serviceMs] = await timed(() => app.get(LatestVersionsService).forNames(ANONYMOUS, names));
      if (sample >= 3) batchServiceTimes.push(serviceMs);
    }

    const resolveResponses = checked(
      await timer.run(
        repeat(
          {
            url: `${baseUrl}/api/v1/resolve`,
            body: { requirements: [data.resolveRoot], toolbox_version: '1.0.0' },
          },
          RESOLVE_SAMPLES + 3,
        ),
      ),
    );
    const resolveTimes = times(resolveResponses.slice(3));
    const resolved = resolveResponses.at(-1)?.body as { success: boolean; resolved: object; conflicts: unknown };
    if (!resolved.success) throw new Error(`resolve failed: ${JSON.stringify(resolved.conflicts)}`);
    const resolvedCount = Object.keys(resolved.resolved).length;

    const maximum = (samples: number[]) => Math.max(...samples);
    return [
      {
        engine,
        measure: `index ${indexed} packages (${searchEngine.label})`,
        p50: indexMs,
        p95: indexMs,
        target: '≤ 20,000 ms',
        note: indexed === 0 ? 'kept database: already indexed' : 'one run: SearchIndexService.indexMissing',
      },
      {
        engine,
        measure: 'baseline GET /api/v1/health',
        p50: percentile(baselineTimes, 0.5),
        p95: percentile(baselineTimes, 0.95),
        target: '—',
        note: `HTTP and framework cost of any request (${timer.where})`,
      },
      {
        engine,
        measure: `search (${SEARCH_SAMPLES} queries)`,
        p50: percentile(searchTimes, 0.5),
        p95: percentile(searchTimes, 0.95),
        target: 'p95 ≤ 10 ms, max ≤ 50 ms',
        note: `slowest ${slowest.ms.toFixed(1)} ms for ${JSON.stringify(slowest.query)}`,
      },
      ...(emptyQueryTimes.length > 0
        ? [
            {
              engine,
              measure: `search, empty query (${emptyQueryTimes.length} of them)`,
              p50: percentile(emptyQueryTimes, 0.5),
              p95: percentile(emptyQueryTimes, 0.95),
              target: '—',
              note: 'counts every visible package',
            },
          ]
        : []),
      {
        engine,
        measure: 'suggest (200 prefixes)',
        p50: percentile(suggestTimes, 0.5),
        p95: percentile(suggestTimes, 0.95),
        target: 'p95 ≤ 5 ms',
        note: `slowest ${maximum(suggestTimes).toFixed(1)} ms`,
      },
      {
        engine,
        measure: 'batch versions, 1,000 names',
        p50: percentile(batchTimes, 0.5),
        p95: percentile(batchTimes, 0.95),
        target: '≤ 50 ms',
        note: `${reported} names answered`,
      },
      {
        engine,
        measure: 'batch versions, service only',
        p50: percentile(batchServiceTimes, 0.5),
        p95: percentile(batchServiceTimes, 0.95),
        target: '—',
        note: 'in-process, same names (no HTTP)',
      },
      {
        engine,
        measure: `resolve ${RESOLVE_GRAPH_SIZE}-package graph`,
        p50: percentile(resolveTimes, 0.5),
        p95: percentile(resolveTimes, 0.95),
        target: '≤ 100 ms',
        note: `${resolvedCount} packages resolved`,
      },
    ];
  } finally {
    await timer?.close();
    await server?.stop();
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * A registry is measured in its steady state, not in the seconds after a 1.7-million-row bulk load:
 * InnoDB purges the load's undo history in the background (competing with the queries for the two
 * cores), and its index statistics are sampled. Waits until the history list is short (at most 60 s)
 * and analyzes the tables, as a server that has run for a while would have.
 */
async function settleMysql(dataSource: DataSource): Promise<number> {
  const started = performance.now();
  for (let waited = 0; waited < 60_000; waited += 500) {
    const [row] = await dataSource.query(`SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'`);
    if (!row || Number(row.Value) < 1_000) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await dataSource.query('ANALYZE TABLE packages, package_versions, publishers, package_search_documents');
  return performance.now() - started;
}

async function main(): Promise<void> {
  const [generateMs, data] = await timed(async () => generateDiscoveryData(PACKAGE_COUNT));
  const versions = data.packages.reduce((sum, pkg) => sum + pkg.versions.length, 0);
  console.log(
    `generated ${data.packages.length} packages, ${versions} versions, ${data.publishers.length} publishers in ${(generateMs / 1000).toFixed(1)} s`,
  );
  // BENCH_ENGINES=mysql runs one engine only (default: sqlite, plus mysql when BENCH_MYSQL_URL is set).
  const engines = (process.env.BENCH_ENGINES ?? 'sqlite,mysql').split(',');
  const rows = engines.includes('sqlite') ? await runOn('sqlite', undefined, data) : [];
  const mysqlUrl = process.env.BENCH_MYSQL_URL;
  if (mysqlUrl && engines.includes('mysql'))
    rows.push(...(await withMysqlDatabase(mysqlUrl, (url) => runOn('mysql', url, data))));

  const header = ['engine', 'measure', 'p50 ms', 'p95 ms', 'target', 'note'];
  const lines = rows.map((row) => [
    row.engine,
    row.measure,
    row.p50.toFixed(1),
    row.p95.toFixed(1),
    row.target,
    row.note,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)));
  const format = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  console.log(
    `\n${format(header)}\n|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|\n${lines.map(format).join('\n')}`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
