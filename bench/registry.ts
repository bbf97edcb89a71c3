/**
 * Registry benchmark (issue "Platform foundation"): generates its own data, starts `tb registry` as a
 * separate process on SQLite, and measures
 *   1. package-detail GET throughput and p50/p99 latency, 10 concurrent connections, 10,000 packages;
 *   2. upload + inspection of a 100 MiB ZIP: time, throughput, and the server's peak RSS growth;
 *   3. download throughput of that file through its signed URL;
 *   4. with `--workers 1`, the detail GET beside a bare NestJS 12 route answering the same JSON (one package's
 *      detail, recorded from the registry), each in its own process, in alternating rounds (`--rounds 3`).
 * Run after `npm run build`: `node dist/bench/registry.js [--seconds 10] [--workers auto|N] [--rounds 3]`.
 * The load generator is wrk when installed (`apt-get install wrk`), else a Node client. `BENCH_CPU_PROF=<dir>` runs
 * the registry and the bare route under `node --cpu-prof` (summarise with `node tools/cpuprofile-top.mjs <file>`).
 */
import 'reflect-metadata';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import yazl from 'yazl';
import { loadConfig } from '../src/config/config.js';
import { createDataSourceOptions } from '../src/database/data-source-options.js';
import { PackageEntity } from '../src/modules/registry/entities/package.entity.js';
import { PublisherEntity } from '../src/modules/registry/entities/publisher.entity.js';
import { RegistryAccountEntity } from '../src/modules/registry/entities/registry-account.entity.js';
import { JwtService } from '@nestjs/jwt';
import { TokenVerifier } from '../src/auth/token-verifier.js';
import { startRegistryProcess } from './support/registry-process.js';
import { parseWrkOutput, wrkInstalled } from './support/wrk.js';
import { loadFigures } from './support/stats.js';

const MIB = 1024 * 1024;
const PACKAGES = 10_000;
const CONNECTIONS = 10;
const SECRET = 'bench-secret-0123456789abcdefghij';
const argument = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const seconds = Number(argument('--seconds')) || 10;
/** Registry worker processes (`tb registry --workers`); one per core by default. */
const workers = argument('--workers') ?? 'auto';
const rounds = Math.max(1, Number(argument('--rounds')) || 3);
/** `BENCH_CPU_PROF=<dir>`: both servers of the comparison write their CPU profiles here. */
const cpuProfileDir = process.env.BENCH_CPU_PROF;
const cpuProfileArgs = cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];

const WORDS =
  'cloud sync task queue file watch server client crypto cache config log metric chart graph http socket auth token user theme icon widget table form parse render build deploy backup search index'.split(
    ' ',
  );

const packageName = (index: number) => `${WORDS[index % WORDS.length]}-${WORDS[(index * 7) % WORDS.length]}-${index}`;

async function seed(dataDir: string): Promise<void> {
  const config = loadConfig({ PLATFORM_JWT_SECRET: SECRET, DATA_DIR: dataDir });
  const dataSource = new DataSource(createDataSourceOptions(config.database));
  await dataSource.initialize();
  await dataSource.runMigrations();
  const now = new Date();
  const user = {
    id: randomUUID(),
    platformUserId: 'bench',
    username: 'bench',
    email: null,
    isAdmin: false,
    createdAt: now,
    updatedAt: now,
  };
  await dataSource.getRepository(RegistryAccountEntity).insert(user);
  const publisher = {
    id: randomUUID(),
    name: 'bench',
    nameLower: 'bench',
    displayName: 'Bench',
    email: null,
    homepage: null,
    verificationStatus: 'verified' as const,
    ownerUserId: user.id,
    createdAt: now,
    updatedAt: now,
  };
  await dataSource.getRepository(PublisherEntity).insert(publisher);
  const rows: Partial<PackageEntity>[] = [];
  for (let index = 0; index < PACKAGES; index += 1) {
    const name = packageName(index);
    rows.push({
      id: randomUUID(),
      name,
      nameLower: name,
      displayName: name.replace(/-/g, ' '),
      description: `A ${WORDS[(index * 3) % WORDS.length]} module for ${WORDS[(index * 5) % WORDS.length]} work`,
      packageType: 'mod',
      visibility: 'public',
      homepage: null,
      repository: null,
      license: 'MIT',
      keywords: [WORDS[index % WORDS.length]],
      readme: null,
      publisherId: publisher.id,
      latestVersion: null,
      totalDownloads: index,
      createdAt: now,
      updatedAt: now,
    });
  }
  for (let start = 0; start < rows.length; start += 500)
    await dataSource.getRepository(PackageEntity).insert(rows.slice(start, start + 500));
  await dataSource.destroy();
}

function runCommand(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} exited with ${code}`))));
  });
}

/** Resident memory of the registry: its process and, when clustered, its workers. */
async function rssOf(pid: number): Promise<number> {
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => ''))
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  const sizes = await Promise.all(
    [pid, ...children].map((id) =>
      readFile(`/proc/${id}/status`, 'utf8').then(
        (text) => Number(/VmRSS:\s+(\d+)/.exec(text)?.[1] ?? 0) * 1024,
        () => 0,
      ),
    ),
  );
  return sizes.reduce((sum, size) => sum + size, 0);
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

type LoadFigures = {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server's CPU time per 1,000 answered requests (NaN when not measured). */
  cpuMsPer1000: number;
};

/**
 * CPU time (user + system, every thread: JIT, GC helpers) a process has used, in ms. Per request it is a steadier
 * figure than req/s on a shared machine: other processes' load slows a server's rounds but hardly its CPU per request.
 */
async function cpuMsOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

async function detailLoad(baseUrl: string, onlyPackage?: string, serverPid?: number): Promise<LoadFigures> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + seconds * 1000;
  const get = (path: string) =>
    new Promise<number>((resolve) => {
      const started = process.hrtime.bigint();
      http
        .get(`${baseUrl}${path}`, { agent }, (response) => {
          response.resume();
          response.on('end', () =>
            resolve(response.statusCode === 200 ? Number(process.hrtime.bigint() - started) / 1e6 : -1),
          );
        })
        .on('error', () => resolve(-1));
    });
  // Warm-up, then the measured run.
  await Promise.all(Array.from({ length: 200 }, (_, i) => get(`/api/v1/packages/${packageName(i)}`)));
  const cpuBefore = await cpuMsOf(serverPid);
  const started = Date.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async (_, worker) => {
      let index = worker;
      while (Date.now() < deadline) {
        index = (index * 1103515245 + 12345) % PACKAGES;
        const latency = await get(`/api/v1/packages/${onlyPackage ?? packageName(index)}`);
        if (latency < 0) errors += 1;
        else latencies.push(latency);
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  const cpuMs = (await cpuMsOf(serverPid)) - cpuBefore;
  agent.destroy();
  return {
    ...loadFigures(latencies, elapsed),
    errors,
    cpuMsPer1000: (cpuMs * 1000) / latencies.length,
  };
}

/**
 * wrk (Debian package `wrk`) is the preferred load generator: a C client leaves the 2-core machine's
 * CPU to the server. Without it, the Node client above is used (it competes with the server for CPU).
 */
async function wrkLoad(
  baseUrl: string,
  scriptDir: string,
  onlyPackage?: string,
  serverPid?: number,
): Promise<LoadFigures | null> {
  if (!wrkInstalled()) return null;
  const script = join(scriptDir, 'detail.lua');
  const names = onlyPackage
    ? `"${onlyPackage}"`
    : Array.from({ length: PACKAGES }, (_, index) => `"${packageName(index)}"`).join(',');
  await writeFile(
    script,
    `local names = {${names}}\nlocal n = #names\nmath.randomseed(42)\nrequest = function()\n  return wrk.format("GET", "/api/v1/packages/" .. names[math.random(1, n)])\nend\n`,
  );
  const run = (duration: number) =>
    spawnSync('wrk', ['-t2', `-c${CONNECTIONS}`, `-d${duration}s`, '--latency', '-s', script, baseUrl], {
      encoding: 'utf8',
    });
  run(2);
  const cpuBefore = await cpuMsOf(serverPid);
  const { requests, rps, p50, p99, non2xx } = parseWrkOutput(run(seconds).stdout);
  const cpuMs = (await cpuMsOf(serverPid)) - cpuBefore;
  return { requests, rps, p50, p99, errors: non2xx, cpuMsPer1000: (cpuMs * 1000) / requests };
}

async function writeBigZip(path: string): Promise<number> {
  const zip = new yazl.ZipFile();
  // Incompressible content, stored: the worst case for hashing and inspection throughput per byte.
  for (let index = 0; index < 20; index += 1)
    zip.addBuffer(randomBytes(5 * MIB), `payload/part-${index}.bin`, { compress: false });
  zip.addBuffer(Buffer.from('{"name":"big"}'), 'tb-mod.json');
  zip.end();
  await new Promise<void>((resolve, reject) =>
    zip.outputStream.pipe(createWriteStream(path)).on('close', resolve).on('error', reject),
  );
  return (await stat(path)).size;
}

/**
 * `--serve-bare-nest <file>`: what a user would write instead, NestFactory.create with one controller answering
 * the package detail JSON in `file` for any name (no database, no guards, no logger).
 */
async function serveBareNest(detailFile: string): Promise<void> {
  const detail = JSON.parse(await readFile(detailFile, 'utf8')) as object;
  @Controller('api/v1/packages')
  class BareController {
    @Get(':name')
    detail() {
      return detail;
    }
  }
  @Module({ controllers: [BareController] })
  class BareModule {}
  const app = await NestFactory.create(BareModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  console.log(`Bare Nest ready at http://127.0.0.1:${port}`);
}

async function startBareNest(detailFile: string): Promise<{ baseUrl: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [...cpuProfileArgs, fileURLToPath(import.meta.url), '--serve-bare-nest', detailFile],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready at (http:\/\/[\d.:]+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`bare Nest exited with ${code}: ${output}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    baseUrl,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Alternating rounds of the registry's detail GET and the bare route's; the median round of each, by req/s and by
 * the server's CPU time per request (`pid`: the registry's process, which answers itself with `--workers 1`).
 */
async function compareWithBareNest(baseUrl: string, pid: number, dataDir: string): Promise<string[]> {
  const response = await fetch(`${baseUrl}/api/v1/packages/${packageName(0)}`);
  if (response.status !== 200) throw new Error(`detail answered ${response.status}`);
  const detailFile = join(dataDir, 'detail.json');
  await writeFile(detailFile, await response.text());
  const bare = await startBareNest(detailFile);
  // Both answer the detail of one package: the same JSON on both sides, from the registry's detail cache.
  const load = async (url: string, serverPid: number) =>
    (await wrkLoad(url, dataDir, packageName(0), serverPid)) ?? (await detailLoad(url, packageName(0), serverPid));
  const ours: LoadFigures[] = [];
  const theirs: LoadFigures[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      theirs.push(await load(bare.baseUrl, bare.pid));
      ours.push(await load(baseUrl, pid));
    }
  } finally {
    await bare.stop();
  }
  const median = (runs: LoadFigures[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
  const medianCpu = (runs: LoadFigures[]) =>
    runs.map((run) => run.cpuMsPer1000).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const [ourMedian, bareMedian] = [median(ours), median(theirs)];
  const perRound = (runs: LoadFigures[]) => runs.map((run) => run.rps.toFixed(0)).join(' / ');
  const cpuPerRound = (runs: LoadFigures[]) => runs.map((run) => run.cpuMsPer1000.toFixed(0)).join(' / ');
  const row = (name: string, median: LoadFigures, runs: LoadFigures[]) =>
    `| ${name} | ${median.rps.toFixed(0)} | ${median.p50.toFixed(2)} | ${median.p99.toFixed(2)} | ${perRound(runs)} | ${medianCpu(runs).toFixed(0)} (${cpuPerRound(runs)}) |`;
  return [
    row('bare NestJS route, same JSON', bareMedian, theirs),
    row('tb registry (--workers 1)', ourMedian, ours),
    `\nregistry / bare Nest: ${(ourMedian.rps / bareMedian.rps).toFixed(2)}× by req/s, ` +
      `${(medianCpu(theirs) / medianCpu(ours)).toFixed(2)}× by CPU time per request (goal ≥ 0.9×)`,
  ];
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-registry-'));
  try {
    let started = Date.now();
    await seed(dataDir);
    console.log(`seeded ${PACKAGES} packages in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const { baseUrl, pid, stop } = await startRegistryProcess({
      dataDir,
      secret: SECRET,
      workers,
      env: { UPLOAD_MAX_BYTES: String(120 * MIB) },
      cpuProfileDir,
    });
    try {
      const wrk = await wrkLoad(baseUrl, dataDir);
      const load = wrk ?? (await detailLoad(baseUrl));
      const loadClient = wrk ? 'wrk -t2 -c10' : 'Node http client, 10 sockets';
      // The peer comparison is per process: a single registry process against a single bare Nest process.
      const comparison = workers === '1' ? await compareWithBareNest(baseUrl, pid, dataDir) : [];

      const signer = new TokenVerifier(new JwtService({}), loadConfig({ PLATFORM_JWT_SECRET: SECRET }));
      const token = signer.sign({ userId: 'bench', username: 'bench', ttlSeconds: 3600 });
      const zipPath = join(dataDir, 'big.zip');
      const zipSize = await writeBigZip(zipPath);
      const baselineRss = await rssOf(pid);
      let peakRss = baselineRss;
      const sampler = setInterval(() => void rssOf(pid).then((rss) => (peakRss = Math.max(peakRss, rss))), 10);
      const uploadUrl = `${baseUrl}/api/v1/packages/${packageName(0)}/upload`;
      // curl (C) when installed, so the client's own CPU cost does not show up as server time.
      const curl = spawnSync('sh', ['-c', 'command -v curl']).status === 0;
      let uploaded: { download_url: string };
      let uploadSeconds: number;
      if (curl) {
        // Asynchronous, so the RSS sampler keeps running during the upload.
        const output = await runCommand('curl', [
          '-sS',
          '-X',
          'POST',
          uploadUrl,
          '-H',
          `authorization: Bearer ${token}`,
          '-F',
          'version=1.0.0',
          '-F',
          `file=@${zipPath}`,
          '-w',
          '\n%{http_code} %{time_total}',
        ]);
        const lines = output.trim().split('\n');
        const [code, time] = lines.pop()!.split(' ');
        if (code !== '201') throw new Error(`upload failed: ${code} ${lines.join('\n')}`);
        uploaded = JSON.parse(lines.join('\n'));
        uploadSeconds = Number(time);
      } else {
        const form = new FormData();
        form.append('version', '1.0.0');
        form.append('file', await openAsBlob(zipPath), 'big.zip');
        started = Date.now();
        const upload = await fetch(uploadUrl, {
          method: 'POST',
          body: form,
          headers: { authorization: `Bearer ${token}` },
        });
        uploadSeconds = (Date.now() - started) / 1000;
        uploaded = (await upload.json()) as { download_url: string };
        if (upload.status !== 201) throw new Error(`upload failed: ${upload.status} ${JSON.stringify(uploaded)}`);
      }
      clearInterval(sampler);

      let downloaded = 0;
      let downloadSeconds: number;
      if (curl) {
        const result = spawnSync(
          'curl',
          ['-sS', '-o', '/dev/null', '-w', '%{size_download} %{time_total}', uploaded.download_url],
          { encoding: 'utf8' },
        );
        const [size, time] = result.stdout.trim().split(' ');
        downloaded = Number(size);
        downloadSeconds = Number(time);
      } else {
        started = Date.now();
        const download = await fetch(uploaded.download_url);
        for await (const chunk of download.body as unknown as AsyncIterable<Uint8Array>) downloaded += chunk.length;
        downloadSeconds = (Date.now() - started) / 1000;
      }

      const rows: Array<[string, string, string]> = [
        ['detail GET throughput (10 connections)', `${load.rps.toFixed(0)} req/s`, '≥ 4,000 req/s'],
        ['detail GET p50 / p99', `${load.p50.toFixed(2)} / ${load.p99.toFixed(2)} ms`, ''],
        ['detail GET requests / errors', `${load.requests} / ${load.errors} (${loadClient})`, ''],
        [
          `upload + inspection, ${(zipSize / MIB).toFixed(1)} MiB ZIP`,
          `${uploadSeconds.toFixed(2)} s = ${(zipSize / MIB / uploadSeconds).toFixed(0)} MiB/s`,
          '≥ 100 MiB/s',
        ],
        ['server peak RSS growth during upload', `${((peakRss - baselineRss) / MIB).toFixed(1)} MiB`, '< 64 MiB'],
        [
          'download of that file (signed URL)',
          `${(downloaded / MIB / downloadSeconds).toFixed(0)} MiB/s (${downloadSeconds.toFixed(2)} s)`,
          '',
        ],
        ['upload/download client', curl ? 'curl' : 'Node fetch', ''],
      ];
      const width = Math.max(...rows.map((row) => row[0].length));
      console.log(
        `\nRegistry benchmark — SQLite, ${PACKAGES} packages, ${seconds} s load, --workers ${workers}, node ${process.version}`,
      );
      console.log(`${'measure'.padEnd(width)} | result | target`);
      for (const [measure, result, target] of rows) console.log(`${measure.padEnd(width)} | ${result} | ${target}`);
      if (comparison.length > 0) {
        console.log(
          `\nPackage detail GET beside a bare NestJS route — ${rounds} alternating rounds of ${seconds} s, ${loadClient}, one process each (median round)\n`,
        );
        console.log(
          '| Server | req/s | p50 ms | p99 ms | req/s per round | server CPU ms per 1,000 requests (per round) |\n|---|---|---|---|---|---|',
        );
        console.log(comparison.join('\n'));
      }
    } finally {
      await stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--serve-bare-nest') {
  await serveBareNest(process.argv[3]);
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
