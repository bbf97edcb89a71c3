/**
 * What exact shared rate limits cost a clustered registry without Redis (`tb registry --workers 2`): every
 * counted request asks the primary for its count (one IPC round trip per event-loop turn of hits). Starts the
 * registry in its own process on a fresh SQLite data directory, warms it up, then runs wrk (10 connections,
 * 2 threads) on a counted route and prints requests/s, p50 and p99; then checks the limit itself with a burst
 * of concurrent anonymous requests against RATE_LIMIT_ANON_PER_HOUR=20.
 *
 *   node dist/bench/cluster-counters.js [--seconds 10] [--workers 2] [--runs 3] [--main PATH/TO/src/main.js]
 *
 * `--main` runs another build of `tb` (a checkout of the code before a change) with the same load, so the two
 * are measured by the same client in the same window. Needs wrk (`apt-get install wrk`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRegistryProcess } from './support/registry-process.js';
import { parseWrkOutput, wrkInstalled, type WrkFigures } from './support/wrk.js';
import { median } from './support/stats.js';

const SECRET = 'bench-secret-0123456789abcdefghij';
const argument = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const seconds = Number(argument('--seconds')) || 10;
const workers = argument('--workers') ?? '2';
const runs = Number(argument('--runs')) || 3;
const main = argument('--main') ?? join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.js');

async function startRegistry(env: Record<string, string>): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-counters-'));
  // Only what the benchmark names: no REDIS_URL from the shell (the counters measured are the ones without Redis).
  const registry = await startRegistryProcess({ dataDir, secret: SECRET, workers, env, main, inheritEnv: false });
  return {
    baseUrl: registry.baseUrl,
    stop: async () => {
      await registry.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function wrk(url: string, duration: number): WrkFigures {
  const result = spawnSync('wrk', ['-t2', '-c10', `-d${duration}s`, '--latency', url], { encoding: 'utf8' });
  return parseWrkOutput(result.stdout);
}

async function throughput(): Promise<WrkFigures[]> {
  // Limits far above the load: every request is counted, none refused.
  const registry = await startRegistry({ RATE_LIMIT_ANON_PER_HOUR: '1000000000' });
  try {
    const url = `${registry.baseUrl}/api/v1/packages?per_page=1`;
    wrk(url, 3);
    return Array.from({ length: runs }, () => wrk(url, seconds));
  } finally {
    await registry.stop();
  }
}

async function admittedOfBurst(): Promise<number> {
  const registry = await startRegistry({ RATE_LIMIT_ANON_PER_HOUR: '20' });
  try {
    const statuses = await Promise.all(
      Array.from({ length: 60 }, () => fetch(`${registry.baseUrl}/api/v1/packages?per_page=1`).then((r) => r.status)),
    );
    return statuses.filter((status) => status === 200).length;
  } finally {
    await registry.stop();
  }
}

if (!wrkInstalled()) throw new Error('this benchmark needs wrk (apt-get install wrk)');
const figures = await throughput();
const admitted = await admittedOfBurst();
console.log(`tb: ${main}, ${workers} workers, no Redis, ${seconds} s per run`);
console.log('| run | requests/s | p50 ms | p99 ms | non-2xx |');
console.log('|---|---|---|---|---|');
figures.forEach((run, index) =>
  console.log(
    `| ${index + 1} | ${Math.round(run.rps)} | ${run.p50.toFixed(2)} | ${run.p99.toFixed(2)} | ${run.non2xx} |`,
  ),
);
console.log(
  `median: ${Math.round(median(figures.map((run) => run.rps)))} requests/s, p50 ${median(figures.map((run) => run.p50)).toFixed(2)} ms`,
);
console.log(`60 concurrent anonymous requests against a limit of 20: ${admitted} admitted`);
