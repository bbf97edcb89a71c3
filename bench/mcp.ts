/**
 * MCP transport figures: tools/call round trips per second for a trivial function (`core.ping`) on the REST
 * door, on the standard Streamable HTTP door (the SDK's client) and on the core directly; and tools/list
 * latency with 500 registered functions (a generated mod). SQLite, in-process server, loopback HTTP.
 *
 * Build and run (private output directory under node_modules/.cache so the project's packages resolve):
 *   npx tsc -p tsconfig.build.json --outDir node_modules/.cache/mcpbench && node node_modules/.cache/mcpbench/bench/mcp.js
 * `BENCH_CALLS` (default 2000) sets the round trips per row, `BENCH_CONCURRENCY` (default 8) the parallel clients.
 */
import 'reflect-metadata';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { McpAppModule, mcpHttpAppOptions, secureMcpHttp } from '../src/apps/mcp.app-module.js';
import { loadConfig } from '../src/config/config.js';
import { AppCoreService } from '../src/modules/app-core/index.js';
import { McpKeysService } from '../src/modules/mcp/index.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const FUNCTIONS = 500;
const rows: string[][] = [];

/** A mod of FUNCTIONS trivial functions, written in the decorator-free form mods use. */
function generatedMod(): string {
  const names = Array.from({ length: FUNCTIONS }, (_, index) => `fn${index}`);
  return `export class BenchMod {
  static modName = 'bench';
  static exports = { ${names.map((name) => `${name}: { api: true, helper: 'generated function ${name}' }`).join(', ')} };
  ${names.map((name) => `${name}({ value } = {}) { return value ?? null; }`).join('\n  ')}
}\n`;
}

async function timed(label: string, calls: number, concurrency: number, body: () => Promise<unknown>) {
  for (let index = 0; index < Math.min(200, calls); index++) await body();
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
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  rows.push([
    label,
    String(concurrency),
    Math.round(calls / seconds).toLocaleString('en'),
    pick(0.5).toFixed(3),
    pick(0.95).toFixed(3),
  ]);
}

async function main(): Promise<void> {
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
  const base = `http://127.0.0.1:${port}`;
  const { key } = await app.get(McpKeysService).create('bench', ['read']);
  const core = app.get(AppCoreService);
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const rest = (path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((response) =>
      response.json(),
    );
  const clients: Client[] = [];
  for (let index = 0; index < CONCURRENCY; index++) {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    clients.push(client);
  }
  let round = 0;
  const client = () => clients[round++ % clients.length];
  const caller = { level: 1, userId: 'bench', transport: 'mcp' };

  try {
    for (const concurrency of [1, CONCURRENCY]) {
      await timed('core.ping, core directly', CALLS * 10, concurrency, () =>
        core.aRunFunction('core.ping', { caller }),
      );
      await timed('tools/call core_ping, REST door', CALLS, concurrency, () =>
        rest('/mcp/tools/call', { name: 'core_ping', arguments: {} }),
      );
      await timed('tools/call core_ping, /mcp (SDK client)', CALLS, concurrency, () =>
        client().callTool({ name: 'core_ping', arguments: {} }),
      );
    }
    const listed = (await rest('/mcp/tools/list', {})) as { tools: unknown[] };
    await timed(`tools/list (${listed.tools.length} tools), REST door`, Math.ceil(CALLS / 4), 1, () =>
      rest('/mcp/tools/list', {}),
    );
    await timed(`tools/list (${listed.tools.length} tools), /mcp (SDK client)`, Math.ceil(CALLS / 4), 1, () =>
      client().listTools(),
    );
  } finally {
    await Promise.all(clients.map((each) => each.close()));
    await app.close();
    await rm(workspace, { recursive: true, force: true });
  }

  const header = ['measurement', 'clients', 'calls/s', 'p50 ms', 'p95 ms'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column])).join(' | ')} |`;
  console.log(
    [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
