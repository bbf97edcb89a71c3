/**
 * Worker start benchmark: how long one `tb worker http` and one `tb worker ws` take from the spawn to the first
 * `GET /health` answering 200, in wall time and in CPU time of the worker process (user + system, read from
 * /proc/<pid>/stat at that moment). A rolling update starts all of a batch's new workers at once, so on a machine
 * with few cores its duration follows the CPU a start needs, not its wall time alone.
 *
 * Each run is a new process, as the manager forks it (`node dist/src/main.js worker http --port P`), on one data
 * directory whose database a first, untimed start has migrated (as under the manager, where the workers find
 * the schema in place). Medians of `--runs` (5) per kind; the runs of the two kinds alternate.
 *
 * Run after `npm run build`: `node dist/bench/worker-start.js [--runs 5] [--kinds http,ws]`.
 * Linux only (the CPU time comes from /proc).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePortRange } from '../test/support/free-ports.js';
import { median } from './support/stats.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '5' }, kinds: { type: 'string', default: 'http,ws' } },
});
const runs = Math.max(1, Number(values.runs));
const kinds = values.kinds.split(',').filter((kind): kind is 'http' | 'ws' => kind === 'http' || kind === 'ws');
const mainScript = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.js');
const SECRET = 'bench-secret-0123456789abcdefghijkl';
/** Linux reports utime and stime in clock ticks of 1/100 s (USER_HZ). */
const TICK_MS = 10;

/** CPU time (user + system) the process has used so far, in ms. */
function cpuMsOf(pid: number): number {
  // Fields after the command name (which may hold spaces, hence the last ')'): utime is the 12th, stime the 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

function healthStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const request = get({ host: '127.0.0.1', port, path: '/health', timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(0));
  });
}

interface StartFigures {
  wallMs: number;
  cpuMs: number;
}

async function startOnce(kind: 'http' | 'ws', port: number, dataDir: string): Promise<StartFigures> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, [mainScript, 'worker', kind, '--port', String(port)], {
    env: { ...process.env, DATA_DIR: dataDir, PLATFORM_JWT_SECRET: SECRET, LOG_FORMAT: 'json' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`tb worker ${kind} exited (${child.exitCode}):\n${errors}`);
      if ((await healthStatus(port)) === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return { wallMs: performance.now() - started, cpuMs: cpuMsOf(child.pid!) };
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-start-'));
  const port = await freePortRange(1);
  try {
    // Untimed: migrates the database, as the manager's workers find it.
    await startOnce('http', port, dataDir);
    const figures = new Map(kinds.map((kind) => [kind, [] as StartFigures[]]));
    for (let run = 0; run < runs; run++)
      for (const kind of kinds) {
        const result = await startOnce(kind, port, dataDir);
        figures.get(kind)!.push(result);
        console.log(`${kind} run ${run + 1}: wall ${result.wallMs.toFixed(0)} ms, CPU ${result.cpuMs} ms`);
      }
    console.log(`\n| worker | start wall (median of ${runs}) | start CPU (median) |\n|---|---|---|`);
    for (const [kind, results] of figures)
      console.log(
        `| ${kind} | ${median(results.map((result) => result.wallMs)).toFixed(0)} ms | ${median(results.map((result) => result.cpuMs))} ms |`,
      );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
