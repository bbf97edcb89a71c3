/**
 * python_execute figures: how long one sandbox takes to load its interpreter (with pyodide's standard library
 * as shipped, and precompiled as the runner does it), the latency of a call when a loaded sandbox is waiting
 * (the usual case: one is kept ahead), the latency of calls sent back to back (each waits for the next
 * sandbox to load), and, for reference, the former unsandboxed runner (`python3 -I`, one process per call).
 *
 * Build and run (private output directory under node_modules/.cache so the project's packages resolve):
 *   npx tsc -p tsconfig.build.json --outDir node_modules/.cache/pybench && node node_modules/.cache/pybench/bench/python-sandbox.js
 * `BENCH_CALLS` (default 10) sets the calls per row.
 */
import { spawn } from 'node:child_process';
import { PythonRunner, findPythonSandbox } from '../src/modules/mcp/index.js';
import { ascending, percentile } from './support/stats.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 10);
const CODE = 'print(sum(range(1000)))';
const rows: string[][] = [];

function summarize(label: string, latencies: number[]): void {
  const sorted = ascending([...latencies]);
  const pick = (fraction: number) => percentile(sorted, fraction);
  rows.push([label, String(sorted.length), pick(0.5).toFixed(0), pick(0.95).toFixed(0), sorted.at(-1)!.toFixed(0)]);
}

async function untilReady(runner: PythonRunner): Promise<void> {
  while (runner.sandboxes().ready < 1) await new Promise((resolve) => setTimeout(resolve, 10));
}

function newRunner(directory: string): PythonRunner {
  return new PythonRunner({
    pyodideDirectory: directory,
    memoryMb: 256,
    maxOutputBytes: 65_536,
    maxTimeoutMs: 30_000,
    concurrency: 2,
    startupTimeoutMs: 300_000,
    onProblem: (message) => console.error(message),
  });
}

function hostPython(code: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-I', '-'], { stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('close', () => resolve(performance.now() - started));
    child.stdin.end(code);
  });
}

async function main(): Promise<void> {
  const directory = findPythonSandbox();
  if (!directory) throw new Error('the pyodide package is not installed');

  // The first warm-up precompiles the standard library in one sandbox, then loads the spare with it.
  const runner = newRunner(directory);
  let started = performance.now();
  runner.warmUp();
  await untilReady(runner);
  rows.push([
    'first start: precompile the library, then load a sandbox',
    '1',
    (performance.now() - started).toFixed(0),
    '',
    '',
  ]);

  const loads: number[] = [];
  const waiting: number[] = [];
  for (let index = 0; index < CALLS; index++) {
    await untilReady(runner);
    started = performance.now();
    const run = await runner.run(CODE, 30_000);
    if (run.stdout !== '499500\n') throw new Error(`unexpected output: ${JSON.stringify(run)}`);
    waiting.push(performance.now() - started);
    // How long the replacement, started when this call took the spare, needs to load.
    await untilReady(runner);
    loads.push(performance.now() - started);
  }
  summarize('call, a loaded sandbox waiting (p50/p95/max ms)', waiting);
  summarize('sandbox load, precompiled library (ms, from the call)', loads);

  const backToBack: number[] = [];
  await untilReady(runner);
  for (let index = 0; index < CALLS; index++) {
    started = performance.now();
    await runner.run(CODE, 30_000);
    backToBack.push(performance.now() - started);
  }
  summarize('calls back to back (each waits for a load)', backToBack);
  await runner.close();

  const host: number[] = [];
  try {
    for (let index = 0; index < CALLS; index++) host.push(await hostPython(CODE));
    summarize('reference: former runner, python3 -I per call (unsandboxed)', host);
  } catch {
    rows.push(['reference: python3 not found', '', '', '', '']);
  }

  const header = ['measurement', 'calls', 'p50 ms', 'p95 ms', 'max ms'];
  console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

await main();
