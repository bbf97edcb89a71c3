/**
 * Peer-to-peer RPC figures: round trips per second and p50/p99 latency of a trivial function
 * (`rpctest.echo`), one call at a time and 32 in flight, called
 *   - directly (TCP + Noise + yamux, one stream per provider),
 *   - through a Circuit Relay v2 relay (hole punching off, so every byte goes through the relay),
 *   - over HTTP: the HTTP worker's `POST /api/rpctest/echo` (JSON body) (`tb worker http`) on the same mod.
 * The provider, the relay and the HTTP worker are separate processes (`tb rpc serve`, `tb rpc relay`,
 * `tb worker http`); the consumer is this process.
 *
 *   npm run build   (or: npx tsc -p tsconfig.build.json)
 *   node dist/bench/rpc.js [--calls N]      (default 3000 calls per row)
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessPolicyStore, RpcPeerNode, policyPath } from '../src/modules/rpc/index.js';
import { ascending, percentile } from './support/stats.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const tbMain = join(root, 'dist', 'src', 'main.js');

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

/** Starts a child; `ready` resolves with the first JSON line it prints, or with what `readyLine` captures. */
function start(
  args: string[],
  env: Record<string, string>,
  readyLine?: RegExp,
): { child: ChildProcess; ready: Promise<any> } {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise((resolveReady, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (readyLine) {
        const match = readyLine.exec(output);
        if (match) resolveReady({ url: match[1] });
        return;
      }
      const line = output.split('\n').find((each) => each.startsWith('{'));
      if (line) resolveReady(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited (${code})`)));
  });
  return { child, ready };
}

interface Row {
  path: string;
  mode: string;
  rps: number;
  p50: number;
  p99: number;
}

async function measure(path: string, calls: number, inFlight: number, once: () => Promise<void>): Promise<Row> {
  for (let index = 0; index < 200; index++) await once(); // warm-up
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) {
        next++;
        const begin = performance.now();
        await once();
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  ascending(latencies);
  const at = (fraction: number) => percentile(latencies, fraction);
  return {
    path,
    mode: inFlight === 1 ? '1 in flight' : `${inFlight} in flight`,
    rps: calls / seconds,
    p50: at(0.5),
    p99: at(0.99),
  };
}

async function main(): Promise<void> {
  const calls = argument('--calls', 3000);
  const workspace = await mkdtemp(join(tmpdir(), 'tb-bench-rpc-'));
  const children: ChildProcess[] = [];
  try {
    const providerDir = join(workspace, 'provider');
    await mkdir(join(providerDir, 'mods'), { recursive: true });
    await cp(join(root, 'test', 'fixtures', 'rpc-test-mod'), join(providerDir, 'mods', 'rpctest'), { recursive: true });
    const consumer = await RpcPeerNode.start({ dataDir: join(workspace, 'consumer'), holePunching: false });
    await new AccessPolicyStore(policyPath(providerDir)).allow(consumer.peerId, 'rpctest.echo');

    const relay = start([tbMain, 'rpc', 'relay', '--listen', '/ip4/127.0.0.1/tcp/0', '--json'], {
      DATA_DIR: join(workspace, 'relay'),
    });
    children.push(relay.child);
    const relayInfo = await relay.ready;
    const relayAddress: string = relayInfo.addresses[0];
    const provider = start(
      [tbMain, 'rpc', 'serve', '--listen', '/ip4/127.0.0.1/tcp/0', '--relay', relayAddress, '--json'],
      { DATA_DIR: providerDir },
    );
    children.push(provider.child);
    const providerInfo = await provider.ready;
    const direct: string = providerInfo.addresses.find((each: string) => !each.includes('p2p-circuit'));
    const viaRelay = `${relayAddress}/p2p-circuit/p2p/${providerInfo.peer_id}`;
    const http = start(
      [tbMain, 'worker', 'http', '--port', '0', '--worker-id', 'bench'],
      {
        DATA_DIR: providerDir,
        PLATFORM_JWT_SECRET: 'bench-secret-bench-secret-bench-secret',
        HTTP_WORKER_HOST: '127.0.0.1',
        OPEN_MODULES: 'rpctest',
        LOG_LEVEL: 'warn',
      },
      /ready at (http:\/\/[\d.:]+)/,
    );
    children.push(http.child);
    const { url } = await http.ready;

    const payload = 'ping';
    const check = (data: unknown) => {
      if (data !== payload) throw new Error(`unexpected answer ${JSON.stringify(data)}`);
    };
    const rows: Row[] = [];
    const rpcOnce = (address: string) => async () => {
      const result = await consumer.call(address, 'rpctest.echo', { args: [payload] });
      if (result.isError()) throw new Error(result.info.help_text);
      check(result.get());
    };
    // AUTO methods: a function with parameters answers POST.
    const httpOnce = async () => {
      const response = await fetch(`${url}/api/rpctest/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: payload }),
      });
      check(((await response.json()) as { result: { data: unknown } }).result.data);
    };
    for (const inFlight of [1, 32]) {
      rows.push(await measure('RPC direct', calls, inFlight, rpcOnce(direct)));
      rows.push(await measure('HTTP worker', calls, inFlight, httpOnce));
    }
    // A relayed connection of its own: the direct one is closed first, hole punching is off on this side.
    await consumer.node.hangUp(consumer.node.getConnections()[0].remotePeer);
    await consumer.client.close();
    for (const inFlight of [1, 32]) rows.push(await measure('RPC via relay', calls, inFlight, rpcOnce(viaRelay)));
    const toProvider = consumer.node
      .getConnections()
      .filter((connection) => connection.remotePeer.toString() === providerInfo.peer_id);
    const relayed =
      toProvider.length > 0 &&
      toProvider.every((connection) => connection.remoteAddr.toString().includes('p2p-circuit'));

    console.log(
      `\nRPC round trips, ${calls} calls per row, trivial function (rpctest.echo), loopback, Node ${process.version}`,
    );
    console.log('| path | concurrency | round trips/s | p50 ms | p99 ms |');
    console.log('|---|---|---|---|---|');
    for (const row of rows)
      console.log(
        `| ${row.path} | ${row.mode} | ${row.rps.toFixed(0)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} |`,
      );
    console.log(`\nrelayed rows went through the relay: ${relayed ? 'yes' : 'NO (connection was upgraded)'}`);
    await consumer.stop();
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await rm(workspace, { recursive: true, force: true });
  }
}

await main();
