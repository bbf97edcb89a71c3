/**
 * HTTP worker benchmark: throughput and latency of a trivial application-core function through
 * `tb worker http` (`GET /api/bench/openTrivial`: routing, the auth guard, the access rule, the runner, the
 * Result as JSON) against a bare NestJS route answering the same JSON on the same machine. Goal: the worker
 * reaches at least 90 % of bare Nest's requests per second.
 *
 * Both servers run as separate processes, one at a time: the worker is the real `tb worker http` with a
 * bench mod placed in MODS_DIR; bare Nest is this script in `--serve-bare-nest` mode (NestFactory.create, one
 * controller, no logger). The load generator is wrk when installed (`apt-get install wrk`), else a Node client.
 *
 * Run after `npm run build`: `node dist/bench/worker.js [--seconds 10] [--connections 50] [--rounds 3]`. Besides req/s
 * it prints each server's CPU time per 1,000 requests (from /proc), steadier than req/s on a shared machine.
 * The WebSocket part (echo messages/s with 1,000 connections) is bench/ws-worker.ts.
 */
import 'reflect-metadata';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { parseWrkOutput, wrkInstalled } from './support/wrk.js';
import { loadFigures } from './support/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    'serve-bare-nest': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Math.max(1, Number(values.rounds));
const here = dirname(fileURLToPath(import.meta.url));
const mainScript = join(here, '..', 'src', 'main.js');
const SECRET = 'bench-secret-0123456789abcdefghijkl';
const PATH_WORKER = '/api/bench/openTrivial';
const PATH_BARE = '/api/bench/trivial';

/** The same answer the worker gives (the whole Result), so both serialise the same JSON. */
const TRIVIAL_RESULT = {
  error: 'none',
  origin: null,
  result: { data_to: 'native', data_info: '', data: 'ok', data_type: 'string' },
  info: { exec_code: 0, help_text: 'OK' },
};

@Controller('api/bench')
class BareController {
  @Get('trivial')
  trivial() {
    return TRIVIAL_RESULT;
  }
}

@Module({ controllers: [BareController] })
class BareModule {}

async function serveBareNest(): Promise<void> {
  const app = await NestFactory.create(BareModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  console.log(`Bare Nest ready at http://127.0.0.1:${port}`);
}

/** A mod placed by hand in MODS_DIR: one open (no session needed) function returning a constant. */
async function writeBenchMod(modsDir: string): Promise<void> {
  const directory = join(modsDir, 'bench-mod');
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'tb-mod.json'),
    JSON.stringify({
      name: 'bench-mod',
      version: '1.0.0',
      entry: 'index.js',
      dependencies: [],
      toolbox_version: '>=0.1.0 <1',
    }),
  );
  await writeFile(
    join(directory, 'index.js'),
    `export class BenchMod {
  static modName = 'bench';
  static exports = { openTrivial: { api: true } };
  openTrivial() { return 'ok'; }
}
`,
  );
}

async function startProcess(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return { child, baseUrl };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

interface LoadFigures {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  client: string;
  /** The server's CPU time (user + system, all its threads) per 1,000 answered requests. */
  cpuMsPer1000: number;
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

/**
 * CPU time a process has used, in ms (NaN where /proc is missing). Per request it is steadier than req/s on a shared
 * machine: other processes' load slows a server's rounds but hardly changes the CPU each request costs it.
 */
function cpuMsOf(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  let stat = '';
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return Number.NaN;
  }
  const fields = stat.split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

type Measured = Omit<LoadFigures, 'cpuMsPer1000'>;

/** `warmedUp` is called between the warm-up and the measured run. */
function wrkLoad(url: string, warmedUp: () => void): Measured | null {
  if (!wrkInstalled()) return null;
  const run = (duration: number) =>
    spawnSync('wrk', ['-t2', `-c${connections}`, `-d${duration}s`, '--latency', url], { encoding: 'utf8' }).stdout;
  run(2);
  warmedUp();
  const { requests, rps, p50, p99, non2xx } = parseWrkOutput(run(seconds));
  return { requests, rps, p50, p99, errors: non2xx, client: `wrk -t2 -c${connections}` };
}

async function nodeLoad(url: string, warmedUp: () => void): Promise<Measured> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const get = () =>
    new Promise<number>((resolve) => {
      const started = process.hrtime.bigint();
      http
        .get(url, { agent }, (response) => {
          response.resume();
          response.on('end', () =>
            resolve(response.statusCode === 200 ? Number(process.hrtime.bigint() - started) / 1e6 : -1),
          );
        })
        .on('error', () => resolve(-1));
    });
  await Promise.all(Array.from({ length: 500 }, get));
  warmedUp();
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < deadline) {
        const latency = await get();
        if (latency < 0) errors += 1;
        else latencies.push(latency);
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  agent.destroy();
  return {
    ...loadFigures(latencies, elapsed),
    errors,
    client: `Node http client, ${connections} sockets`,
  };
}

async function measure(url: string, server: ChildProcess): Promise<LoadFigures> {
  const probe = await fetch(url);
  if (probe.status !== 200) throw new Error(`${url} answered ${probe.status}: ${await probe.text()}`);
  let cpuBefore = Number.NaN;
  const warmedUp = () => (cpuBefore = cpuMsOf(server.pid));
  const figures = wrkLoad(url, warmedUp) ?? (await nodeLoad(url, warmedUp));
  const cpuMs = cpuMsOf(server.pid) - cpuBefore;
  return { ...figures, cpuMsPer1000: (cpuMs * 1000) / figures.requests };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The median run by req/s of several (the machine may be shared: alternating rounds spread the noise evenly). */
function medianRun(runs: LoadFigures[]): LoadFigures {
  const rps = median(runs.map((run) => run.rps));
  return runs.find((run) => run.rps === rps)!;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-worker-'));
  const servers: ChildProcess[] = [];
  try {
    await writeBenchMod(join(dataDir, 'mods'));
    const bare = await startProcess(
      [fileURLToPath(import.meta.url), '--serve-bare-nest'],
      {},
      /Bare Nest ready at (http:\/\/[^\s]+)/,
    );
    servers.push(bare.child);
    const worker = await startProcess(
      [mainScript, 'worker', 'http', '--port', '0', '--worker-id', 'bench'],
      { PLATFORM_JWT_SECRET: SECRET, DATA_DIR: dataDir, HTTP_WORKER_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      /ready at (http:\/\/[\d.:]+)/,
    );
    servers.push(worker.child);

    // Both servers idle while the other is measured; rounds alternate.
    const bareRuns: LoadFigures[] = [];
    const workerRuns: LoadFigures[] = [];
    for (let round = 0; round < rounds; round += 1) {
      bareRuns.push(await measure(`${bare.baseUrl}${PATH_BARE}`, bare.child));
      workerRuns.push(await measure(`${worker.baseUrl}${PATH_WORKER}`, worker.child));
    }
    const bareFigures = medianRun(bareRuns);
    const workerFigures = medianRun(workerRuns);

    const medianCpu = (runs: LoadFigures[]) => median(runs.map((run) => run.cpuMsPer1000));
    const row = (label: string, figures: LoadFigures, runs: LoadFigures[]) =>
      `| ${label} | ${figures.rps.toFixed(0)} | ${figures.p50.toFixed(2)} | ${figures.p99.toFixed(2)} | ${runs.map((run) => run.rps.toFixed(0)).join(' / ')} | ${medianCpu(runs).toFixed(0)} (${runs.map((run) => run.cpuMsPer1000.toFixed(0)).join(' / ')}) | ${figures.errors} |`;
    console.log(
      `\nHTTP worker vs bare NestJS — ${rounds} alternating rounds of ${seconds} s, ${bareFigures.client}, one process each (median round shown)\n`,
    );
    console.log(
      '| Server | req/s | p50 ms | p99 ms | req/s per round | server CPU ms per 1,000 requests, median (per round) | errors |',
    );
    console.log('|---|---|---|---|---|---|---|');
    console.log(row(`bare NestJS route (GET ${PATH_BARE})`, bareFigures, bareRuns));
    console.log(row(`tb worker http (GET ${PATH_WORKER})`, workerFigures, workerRuns));
    const ratio = workerFigures.rps / bareFigures.rps;
    const cpuRatio = medianCpu(bareRuns) / medianCpu(workerRuns);
    console.log(
      `\nworker / bare Nest: ${(ratio * 100).toFixed(1)} % by req/s (goal ≥ 90 %) — ${ratio >= 0.9 ? 'met' : 'NOT met'}; ` +
        `${(cpuRatio * 100).toFixed(1)} % by the servers' CPU time per request`,
    );
    // The WebSocket worker's figures (echo messages/s, 1,000 connections): bench/ws-worker.ts.
  } finally {
    for (const server of servers) await stop(server);
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (values['serve-bare-nest']) {
  await serveBareNest();
} else {
  await main();
}
