/**
 * WebSocket worker benchmark: generates an echo mod, starts a WS worker as a separate process
 * (this file forked with `serve`), opens 1,000 connections and measures
 *   1. echo messages/s: every connection sends a message and waits for its echo before the next one
 *      (closed loop), with round-trip p50/p99;
 *   2. channel fan-out: one message broadcast to a channel all 1,000 connections joined, deliveries/s.
 * Run after `npm run build`: `node dist/bench/ws-worker.js [--seconds 10] [--connections 1000]`
 * (`--broker redis` with REDIS_URL set measures the broadcast through Redis pub/sub).
 */
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { loadConfig } from '../src/config/config.js';
import { startWsWorker } from '../src/cli/worker-ws.command.js';
import { ascending, percentile } from './support/stats.js';

const SECRET = 'bench-secret-0123456789abcdefghij';
const argument = (name: string) =>
  process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined;
const seconds = Number(argument('--seconds')) || 10;
const connections = Number(argument('--connections')) || 1000;
const broker = argument('--broker') ?? 'local';

const ECHO_MOD = `
export class BenchMod {
  static modName = 'bench';
  static exports = { echo: { websocketHandler: 'echo', test: false } };
  echo() {
    return {
      on_message: async (ws, message) => {
        if (message && message.fanout) { await ws.broadcast('all', message.fanout); return undefined; }
        if (message && message.join) { await ws.join(message.join); return { joined: true }; }
        return message;
      },
    };
  }
}
`;

async function serve(): Promise<void> {
  const config = loadConfig(process.env, { services: ['wsWorker'] });
  const { url } = await startWsWorker(config, {}, { logger: ['error'] });
  process.send!({ tb: 'listening', url });
}

async function openAll(url: string, count: number): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  // In batches, so the handshakes do not all queue in the backlog at once.
  for (let start = 0; start < count; start += 100) {
    const batch = Array.from(
      { length: Math.min(100, count - start) },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const socket = new WebSocket(url);
          socket.once('message', () => resolve(socket)); // {type: "connected"}
          socket.once('error', reject);
          socket.once('close', (code) => reject(new Error(`connection closed with ${code}`)));
        }),
    );
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

async function echoLoad(sockets: WebSocket[], durationMs: number): Promise<{ messages: number; latencies: number[] }> {
  const latencies: number[] = [];
  let messages = 0;
  const deadline = Date.now() + durationMs;
  const payload = JSON.stringify({ text: 'hello, worker', n: 42 });
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          let sentAt = 0;
          const next = () => {
            if (Date.now() >= deadline) {
              socket.off('message', onMessage);
              resolve();
              return;
            }
            sentAt = performance.now();
            socket.send(payload);
          };
          const onMessage = () => {
            latencies.push(performance.now() - sentAt);
            messages += 1;
            next();
          };
          socket.on('message', onMessage);
          next();
        }),
    ),
  );
  return { messages, latencies };
}

async function fanOut(sockets: WebSocket[], rounds: number): Promise<{ deliveries: number; ms: number }> {
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.once('message', () => resolve());
          socket.send(JSON.stringify({ join: 'all' }));
        }),
    ),
  );
  let deliveries = 0;
  const started = performance.now();
  for (let round = 0; round < rounds; round += 1) {
    const arrived = Promise.all(
      sockets.map((socket) => new Promise<void>((resolve) => socket.once('message', () => resolve()))),
    );
    sockets[round % sockets.length].send(JSON.stringify({ fanout: { round } }));
    await arrived;
    deliveries += sockets.length;
  }
  return { deliveries, ms: performance.now() - started };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-ws-'));
  const modDir = join(dataDir, 'mods', 'bench-mod');
  await mkdir(modDir, { recursive: true });
  await writeFile(join(modDir, 'tb-mod.json'), JSON.stringify({ name: 'bench-mod', version: '1.0.0' }));
  await writeFile(join(modDir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(modDir, 'index.js'), ECHO_MOD);

  const child = fork(fileURLToPath(import.meta.url), ['serve'], {
    env: {
      ...process.env,
      PLATFORM_JWT_SECRET: SECRET,
      DATA_DIR: dataDir,
      WS_WORKER_PORT: '0',
      MESSAGE_BROKER: broker,
      OPEN_MODULES: 'bench',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.on('message', (message) => resolve((message as { url: string }).url));
      child.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
    });
    const wsUrl = `${url.replace(/^http/, 'ws')}/ws/bench/echo`;
    const connectStarted = performance.now();
    const sockets = await openAll(wsUrl, connections);
    const connectMs = performance.now() - connectStarted;

    await echoLoad(sockets, 1000); // warm-up
    const { messages, latencies } = await echoLoad(sockets, seconds * 1000);
    ascending(latencies);
    const fan = await fanOut(sockets, 50);
    sockets.forEach((socket) => socket.terminate());

    const rows: Array<[string, string]> = [
      ['connections', `${connections.toLocaleString('en')} (opened in ${connectMs.toFixed(0)} ms)`],
      ['broker', broker],
      ['echo messages/s', `${Math.round(messages / seconds).toLocaleString('en')} (${seconds} s, closed loop)`],
      [
        'echo round trip p50 / p99',
        `${percentile(latencies, 0.5).toFixed(1)} ms / ${percentile(latencies, 0.99).toFixed(1)} ms`,
      ],
      [
        'channel fan-out deliveries/s',
        `${Math.round(fan.deliveries / (fan.ms / 1000)).toLocaleString('en')} (50 broadcasts to ${connections} members)`,
      ],
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    console.log(`\nWebSocket worker, node ${process.version}`);
    for (const [label, value] of rows) console.log(`${label.padEnd(width)}  ${value}`);
  } finally {
    child.kill('SIGTERM');
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve') await serve();
else await main();
