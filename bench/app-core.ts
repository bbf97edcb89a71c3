/**
 * Application-core figures: the overhead of `runFunction` on a trivial function (target ≤ 5 µs per
 * call without caching) and docs search latency over this project's own sources (`src/`, `docs/`).
 *
 * Build and run with a private output directory (never `dist/`):
 *   npx tsc --outDir /tmp/appcorebuild --rootDir . --module nodenext --moduleResolution nodenext \
 *     --target es2023 --experimentalDecorators --emitDecoratorMetadata --skipLibCheck --types node --ignoreConfig bench/app-core.ts
 *   ln -sfn "$PWD/node_modules" /tmp/appcorebuild/node_modules
 *   echo '{"type":"module"}' > /tmp/appcorebuild/package.json
 *   node /tmp/appcorebuild/bench/app-core.js
 *
 * Timings on a shared machine move by 2× between rounds; the steady figure is instructions per call. With
 * `--calls <local|http|row|kwargs> <n>` the bench only warms up (200,000 calls) and makes n calls of that row, silently,
 * for callgrind; the difference of two counts divided by the difference of n is the cost of one call:
 *   for n in 1000000 2000000; do valgrind --tool=callgrind --callgrind-out-file=/dev/null node --no-concurrent-recompilation \
 *     --single-threaded-gc --hash-seed=1 --random-seed=1 /tmp/appcorebuild/bench/app-core.js --calls local $n 2>&1 | grep Collected; done
 * (the flags make one build's count repeat run to run; add `--perf-basic-prof` and `--dump-instr=yes` to attribute the
 * instructions to JIT functions through /tmp/perf-<pid>.map, as in docs/app-core.md).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DocsService } from '../src/modules/app-core/docs/docs.service.js';
import { Export, Mod } from '../src/modules/app-core/export.decorator.js';
import { FunctionRegistry } from '../src/modules/app-core/function-registry.js';
import { FunctionRunner } from '../src/modules/app-core/function-runner.js';
import { LOCAL_CALLER } from '../src/modules/app-core/caller.js';
import { ascending, percentile } from './support/stats.js';

@Mod('bench')
class BenchMod {
  @Export()
  add(first: number, second: number) {
    return first + second;
  }

  @Export({ row: true })
  addRaw(first: number, second: number) {
    return first + second;
  }

  @Export({ memoryCache: true })
  addCached(first: number, second: number) {
    return first + second;
  }

  @Export()
  async addAsync(first: number, second: number) {
    return first + second;
  }
}

const rows: Array<[string, string]> = [];

function measureSync(label: string, calls: number, body: () => unknown): void {
  for (let index = 0; index < Math.min(calls, 100_000); index++) body(); // warm-up for the JIT
  const started = process.hrtime.bigint();
  for (let index = 0; index < calls; index++) body();
  const nanoseconds = Number(process.hrtime.bigint() - started) / calls;
  rows.push([label, `${nanoseconds.toFixed(0)} ns/call (${calls.toLocaleString('en')} calls)`]);
}

async function measureAsync(label: string, calls: number, body: () => Promise<unknown>): Promise<void> {
  for (let index = 0; index < 10_000; index++) await body();
  const started = process.hrtime.bigint();
  for (let index = 0; index < calls; index++) await body();
  const nanoseconds = Number(process.hrtime.bigint() - started) / calls;
  rows.push([label, `${nanoseconds.toFixed(0)} ns/call (${calls.toLocaleString('en')} calls)`]);
}

/** `--calls <row> <n>`: warm up, then n calls of one row and nothing else (for an instruction count). */
async function callsOnly(row: string, calls: number): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-app-core-'));
  try {
    const registry = new FunctionRegistry({ appId: 'bench', logger: { log: () => undefined, error: () => undefined } });
    registry.registerInstance(new BenchMod());
    const runner = new FunctionRunner(registry, { dataDir });
    const httpCaller = { level: 1, userId: 'bench', transport: 'http' };
    const bodies: Record<string, () => unknown> = {
      local: () => runner.runFunction('bench.add', { args: [1, 2], caller: LOCAL_CALLER }),
      http: () => runner.runFunction('bench.add', { args: [1, 2], caller: httpCaller }),
      row: () => runner.runFunction('bench.addRaw', { args: [1, 2], caller: LOCAL_CALLER }),
      kwargs: () => runner.runFunction('bench.add', { kwargs: { first: 1, second: 2 }, caller: LOCAL_CALLER }),
    };
    const body = bodies[row];
    if (body === undefined || !Number.isSafeInteger(calls))
      throw new Error(`--calls ${Object.keys(bodies).join('|')} <n>`);
    for (let index = 0; index < 200_000; index++) body();
    for (let index = 0; index < calls; index++) body();
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const callsAt = process.argv.indexOf('--calls');
  if (callsAt !== -1) return callsOnly(process.argv[callsAt + 1] ?? '', Number(process.argv[callsAt + 2]));
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-app-core-'));
  try {
    const registry = new FunctionRegistry({ appId: 'bench', logger: { log: () => undefined, error: () => undefined } });
    registry.registerInstance(new BenchMod());
    const runner = new FunctionRunner(registry, { dataDir });
    const direct = new BenchMod();
    const calls = 1_000_000;
    measureSync('direct method call (baseline)', calls, () => direct.add(1, 2));
    measureSync("runFunction('bench.add', {args})", calls, () =>
      runner.runFunction('bench.add', { args: [1, 2], caller: LOCAL_CALLER }),
    );
    // Any caller other than the frozen LOCAL_CALLER is checked on every call (what every transport passes).
    const httpCaller = { level: 1, userId: 'bench', transport: 'http' };
    measureSync("runFunction('bench.add', {args}), HTTP caller", calls, () =>
      runner.runFunction('bench.add', { args: [1, 2], caller: httpCaller }),
    );
    measureSync("runFunction(['bench','add'], {args})", calls, () =>
      runner.runFunction(['bench', 'add'], { args: [1, 2], caller: LOCAL_CALLER }),
    );
    measureSync('runFunction row: true', calls, () =>
      runner.runFunction('bench.addRaw', { args: [1, 2], caller: LOCAL_CALLER }),
    );
    measureSync('runFunction {kwargs}', calls, () =>
      runner.runFunction('bench.add', { kwargs: { first: 1, second: 2 }, caller: LOCAL_CALLER }),
    );
    measureSync('runAny (bare data)', calls, () => runner.runAny('bench.add', { args: [1, 2], caller: LOCAL_CALLER }));
    measureSync('runFunction memoryCache hit', calls, () =>
      runner.runFunction('bench.addCached', { args: [1, 2], caller: LOCAL_CALLER }),
    );
    await measureAsync('aRunFunction on an async function', 200_000, () =>
      runner.aRunFunction('bench.addAsync', { args: [1, 2], caller: LOCAL_CALLER }),
    );

    const root = resolve('.');
    const docs = new DocsService({
      docsRoot: join(root, 'docs'),
      sourceRoots: [join(root, 'src')],
      indexPath: join(dataDir, 'docs-index.json'),
      baseDir: root,
    });
    const cold = await docs.docsInit({ forceRebuild: true });
    rows.push([
      'docs init, cold (parse everything)',
      `${cold.time_ms} ms, ${cold.files_parsed} files, ${cold.sections} sections, ${cold.elements} elements`,
    ]);
    const warm = await docs.docsInit();
    rows.push([
      'docs init, incremental (nothing changed)',
      `${warm.time_ms} ms, ${warm.files_unchanged} files unchanged`,
    ]);
    const queries = [
      'function registry',
      'run function cache',
      'markdown section parser',
      'access level',
      'result error',
      'docs writer path traversal',
      'footprint memory cpu',
      'network probe ping',
      'zip',
      'token',
    ];
    await docs.docsReader({ query: 'warm up' }); // builds the BM25 index once
    const latencies: number[] = [];
    for (let round = 0; round < 50; round++) {
      for (const query of queries) {
        const started = performance.now();
        await docs.docsReader({ query, maxResults: 25 });
        latencies.push(performance.now() - started);
      }
    }
    ascending(latencies);
    const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
    rows.push([
      'docs reader search (BM25, 25 results)',
      `mean ${mean.toFixed(3)} ms, p50 ${percentile(latencies, 0.5).toFixed(3)} ms, p95 ${percentile(latencies, 0.95).toFixed(3)} ms (${latencies.length} queries)`,
    ]);
    const lookupLatencies: number[] = [];
    for (let round = 0; round < 50; round++) {
      for (const name of ['Result', 'run', 'DocsService.docsReader', 'parse']) {
        const started = performance.now();
        await docs.docsLookup({ name });
        lookupLatencies.push(performance.now() - started);
      }
    }
    ascending(lookupLatencies);
    rows.push([
      'docs lookup by name',
      `p50 ${percentile(lookupLatencies, 0.5).toFixed(3)} ms, p95 ${percentile(lookupLatencies, 0.95).toFixed(3)} ms (${lookupLatencies.length} lookups)`,
    ]);

    const width = Math.max(...rows.map(([label]) => label.length));
    console.log(`app-core bench — node ${process.version}, ${process.platform}/${process.arch}`);
    console.log(`${'measure'.padEnd(width)}  result`);
    console.log(`${'-'.repeat(width)}  ${'-'.repeat(40)}`);
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
