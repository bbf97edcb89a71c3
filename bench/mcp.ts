/**
 * MCP transport figures beside the peer a user would pick instead. `tools/call` round trips per second of a
 * trivial tool over Streamable HTTP, measured with the SDK's own client against two servers, each in its own
 * process: ours (the real MCP app: the mcp-key strategy under the one AuthGuard, the session store, a server
 * per request, `core_ping` running `core.ping` through the application core) and a bare
 * `@modelcontextprotocol/sdk` server in the SDK's stateless style (createMcpExpressApp, a McpServer and
 * transport per request, one tool answering the same pong, no auth, no sessions). Rounds alternate between
 * the two with 1 and with BENCH_CONCURRENCY clients; the table shows the median round and the ratio ours/bare,
 * by calls/s and by the server's CPU time per call (read from /proc, steadier on a shared machine).
 * Then the REST door and `tools/list` with 500 registered functions (a generated mod) on ours. SQLite.
 *
 * Build and run (private output directory under node_modules/.cache so the project's packages resolve):
 *   npx tsc -p tsconfig.build.json --outDir node_modules/.cache/mcpbench && node node_modules/.cache/mcpbench/bench/mcp.js
 * `BENCH_CALLS` (default 2000) sets the round trips per round, `BENCH_CONCURRENCY` (default 8) the parallel
 * clients of the second series, `BENCH_ROUNDS` (default 3) the alternating rounds; `BENCH_CPU_PROF=<dir>` runs
 * both servers under `node --cpu-prof` (summarise with `node tools/cpuprofile-top.mjs <dir>/<file>.cpuprofile`).
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { McpAppModule, mcpHttpAppOptions, secureMcpHttp } from '../src/apps/mcp.app-module.js';
import { loadConfig } from '../src/config/config.js';
import { McpKeysService } from '../src/modules/mcp/index.js';
import { ascending, median, percentile } from './support/stats.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const FUNCTIONS = 500;
const READY = /ready at (http:\/\/[\d.:]+) key=(\S*)/;
/** USER_HZ of /proc/<pid>/stat: 100 on every Linux Node supports. */
const CLOCK_TICKS = 100;

/** A mod of FUNCTIONS trivial functions, written in the decorator-free form mods use. */
function generatedMod(): string {
  const names = Array.from({ length: FUNCTIONS }, (_, index) => `fn${index}`);
  return `export class BenchMod {
  static modName = 'bench';
  static exports = { ${names.map((name) => `${name}: { api: true, helper: 'generated function ${name}' }`).join(', ')} };
  ${names.map((name) => `${name}({ value } = {}) { return value ?? null; }`).join('\n  ')}
}\n`;
}

/** Our MCP server as `tb mcp --http` runs it, with a `read` key; prints its address and the key. */
async function serveOurs(): Promise<void> {
  Logger.overrideLogger(false);
  const workspace = await mkdtemp(join(tmpdir(), 'tb-mcp-bench-'));
  const modsDir = join(workspace, 'mods');
  await mkdir(join(modsDir, 'bench'), { recursive: true });
  await writeFile(join(modsDir, 'bench', 'tb-mod.json'), JSON.stringify({ name: 'bench', version: '1.0.0' }));
  await writeFile(join(modsDir, 'bench', 'index.js'), generatedMod());
  await writeFile(join(modsDir, 'bench', 'package.json'), '{"type": "module"}');
  const config = loadConfig(
    { DATA_DIR: workspace, MODS_DIR: modsDir, MCP_PORT: '0', MCP_MODS_RESCAN_SECONDS: '0', LOG_LEVEL: 'error' },
    { services: ['mcp'] },
  );
  const app = await createHttpApp(McpAppModule.forRoot(config, { mode: 'http' }), {
    ...mcpHttpAppOptions(config),
    logger: false,
  });
  secureMcpHttp(app, config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const { key } = await app.get(McpKeysService).create('bench', ['read']);
  const stop = async () => {
    await app.close();
    await rm(workspace, { recursive: true, force: true });
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  console.log(`ours ready at http://127.0.0.1:${port} key=${key}`);
}

/** The SDK's stateless Streamable HTTP server with one tool, as its own example builds it. */
async function serveBareSdk(): Promise<void> {
  const serverFor = () => {
    const server = new McpServer({ name: 'bare-sdk', version: '1.0.0' });
    server.registerTool('core_ping', { description: 'answers pong' }, () => ({
      content: [{ type: 'text', text: JSON.stringify({ status: 'pong', timestamp: new Date().toISOString() }) }],
    }));
    return server;
  };
  const app = createMcpExpressApp();
  app.post('/mcp', async (request, response) => {
    const server = serverFor();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, request.body);
  });
  const listener = app.listen(0, '127.0.0.1', () => {
    const { port } = listener.address() as { port: number };
    console.log(`bare SDK ready at http://127.0.0.1:${port} key=`);
  });
  process.once('SIGTERM', () => listener.close(() => process.exit(0)));
}

interface Server {
  child: ChildProcess;
  base: string;
  key: string;
}

async function startServer(mode: string): Promise<Server> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, fileURLToPath(import.meta.url), mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [base, key] = await new Promise<[string, string]>((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = READY.exec(output);
      if (match) resolve([match[1], match[2]]);
    });
    child.once('exit', (code) => reject(new Error(`${mode} exited with ${code}: ${output}`)));
  });
  child.stdout!.resume();
  return { child, base, key };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  await exited;
}

async function connectClients(server: Server, count: number): Promise<Client[]> {
  const clients: Client[] = [];
  for (let index = 0; index < count; index++) {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
        requestInit: server.key ? { headers: { authorization: `Bearer ${server.key}` } } : {},
      }),
    );
    clients.push(client);
  }
  return clients;
}

interface Figures {
  perSecond: number;
  p50: number;
  p95: number;
  /** The server process's CPU time per call (user + system), or NaN where /proc is not there. */
  cpuMicros: number;
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux); NaN elsewhere. */
async function cpuSecondsOf(pid: number | undefined): Promise<number> {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

async function timed(
  server: Server,
  calls: number,
  concurrency: number,
  body: () => Promise<unknown>,
): Promise<Figures> {
  for (let index = 0; index < Math.min(200, calls); index++) await body();
  const cpuBefore = await cpuSecondsOf(server.child.pid);
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next += 1;
        const begin = performance.now();
        await body();
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuMicros = (((await cpuSecondsOf(server.child.pid)) - cpuBefore) * 1e6) / calls;
  ascending(latencies);
  const pick = (fraction: number) => percentile(latencies, fraction);
  return { perSecond: calls / seconds, p50: pick(0.5), p95: pick(0.95), cpuMicros };
}

function medianRound(runs: Figures[]): Figures {
  const sorted = [...runs].sort((a, b) => a.perSecond - b.perSecond);
  return sorted[Math.floor(sorted.length / 2)];
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const bare = await startServer('--serve-bare-sdk');
  const ours = await startServer('--serve-ours');
  const rows: string[][] = [];
  const ratios: string[] = [];
  try {
    const bareClients = await connectClients(bare, CONCURRENCY);
    const ourClients = await connectClients(ours, CONCURRENCY);
    const calling = (clients: Client[]) => {
      let turn = 0;
      return () => clients[turn++ % clients.length].callTool({ name: 'core_ping', arguments: {} });
    };
    for (const concurrency of [1, CONCURRENCY]) {
      const bareRuns: Figures[] = [];
      const ourRuns: Figures[] = [];
      // One server idles while the other is measured; alternating rounds spread the machine's noise evenly.
      for (let round = 0; round < ROUNDS; round++) {
        bareRuns.push(await timed(bare, CALLS, concurrency, calling(bareClients.slice(0, concurrency))));
        ourRuns.push(await timed(ours, CALLS, concurrency, calling(ourClients.slice(0, concurrency))));
      }
      const row = (label: string, runs: Figures[]) => {
        const median = medianRound(runs);
        rows.push([
          label,
          String(concurrency),
          Math.round(median.perSecond).toLocaleString('en'),
          median.p50.toFixed(3),
          median.p95.toFixed(3),
          Math.round(median.cpuMicros).toString(),
          runs.map((run) => Math.round(run.perSecond)).join(' / '),
        ]);
        return median;
      };
      const bareMedian = row('tools/call, bare SDK server (stateless, one tool)', bareRuns);
      const ourMedian = row('tools/call core_ping, ours /mcp', ourRuns);
      // Server CPU per call is steadier than calls/s when other work shares the machine.
      const cpuRatio = median(bareRuns.map((run) => run.cpuMicros)) / median(ourRuns.map((run) => run.cpuMicros));
      ratios.push(
        `${concurrency} client${concurrency === 1 ? '' : 's'}: ${(ourMedian.perSecond / bareMedian.perSecond).toFixed(2)}× by calls/s, ${cpuRatio.toFixed(2)}× by server CPU per call`,
      );
    }
    await Promise.all([...bareClients, ...ourClients].map((client) => client.close()));

    const headers = { authorization: `Bearer ${ours.key}`, 'content-type': 'application/json' };
    const rest = (path: string, body: unknown) =>
      fetch(`${ours.base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((response) =>
        response.json(),
      );
    const [client] = await connectClients(ours, 1);
    const single = (label: string, figures: Figures) =>
      rows.push([
        label,
        '1',
        Math.round(figures.perSecond).toLocaleString('en'),
        figures.p50.toFixed(3),
        figures.p95.toFixed(3),
        Math.round(figures.cpuMicros).toString(),
        '',
      ]);
    single(
      'tools/call core_ping, ours REST door',
      await timed(ours, CALLS, 1, () => rest('/mcp/tools/call', { name: 'core_ping', arguments: {} })),
    );
    const listed = (await rest('/mcp/tools/list', {})) as { tools: unknown[] };
    const listCalls = Math.ceil(CALLS / 4);
    single(
      `tools/list (${listed.tools.length} tools), ours REST door`,
      await timed(ours, listCalls, 1, () => rest('/mcp/tools/list', {})),
    );
    single(
      `tools/list (${listed.tools.length} tools), ours /mcp`,
      await timed(ours, listCalls, 1, () => client.listTools()),
    );
    await client.close();
  } finally {
    await stopServer(ours);
    await stopServer(bare);
  }
  console.log(
    `MCP over Streamable HTTP, SDK client, servers in their own processes, ${ROUNDS} alternating rounds of ${CALLS} calls (median round shown)\n`,
  );
  console.log(
    table(['measurement', 'clients', 'calls/s', 'p50 ms', 'p95 ms', 'server CPU µs/call', 'calls/s per round'], rows),
  );
  console.log(`\nours / bare SDK: ${ratios.join(', ')} (goal ≥ 0.9×)`);
}

const mode = process.argv[2];
if (mode === '--serve-ours') await serveOurs();
else if (mode === '--serve-bare-sdk') await serveBareSdk();
else
  await main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
