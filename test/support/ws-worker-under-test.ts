import 'reflect-metadata';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import WebSocket from 'ws';
import { SessionCookies } from '../../src/auth/session-cookie/session-cookies.js';
import { relayBrokerMessages } from '../../src/broker/ipc-message-broker.js';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { startWsWorker as startWorker } from '../../src/cli/worker-ws.command.js';
import { WsWorkerServer } from '../../src/modules/ws-worker/ws-worker.server.js';
import type { Backend } from './backends.js';
import { TEST_SECRET } from './registry-under-test.js';
import { writeWsTestMod } from './ws-test-mod.js';

export interface WsWorkerUnderTest {
  baseUrl: string;
  /** `ws://host:port`. */
  wsUrl: string;
  app: INestApplication;
  config: PlatformConfig;
  server: WsWorkerServer;
  close(): Promise<void>;
}

/** A fresh data directory with the chat test mod, and the environment a WS worker on `backend` needs. */
export async function wsWorkerEnvironment(
  backend: Backend,
  env: Record<string, string> = {},
): Promise<{ env: Record<string, string>; dispose(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-ws-e2e-'));
  await writeWsTestMod(join(dataDir, 'mods'));
  const provisioned = await backend.provision();
  return {
    env: {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      WS_WORKER_HOST: '127.0.0.1',
      WS_WORKER_PORT: '0',
      APP_ID: 'toolbox',
      // The chat test mod's handlers are open (anonymous connections allowed at level 0); vault's are not.
      OPEN_MODULES: 'chat',
      ...provisioned.env,
      ...env,
    },
    async dispose() {
      await provisioned.dispose();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Starts a WS worker in this process on a free port (the chat test mod installed). */
export async function startWsWorker(env: Record<string, string>): Promise<WsWorkerUnderTest> {
  const config = loadConfig(env, { services: ['wsWorker'] });
  const { app, url } = await startWorker(config, {}, { logger: ['error'] });
  return {
    baseUrl: url,
    wsUrl: url.replace(/^http/, 'ws'),
    app,
    config,
    server: app.get(WsWorkerServer),
    close: () => app.close(),
  };
}

const CHILD_ENTRY = fileURLToPath(new URL('./ws-worker-process.ts', import.meta.url));
const TS_LOADER = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));

export interface SpawnedWorker {
  wsUrl: string;
  baseUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a WS worker as a separate OS process (node + an SWC loader for the TypeScript sources), and
 * resolves once it reports `{tb: 'listening', url}` over IPC. `onMessage` sees its other IPC messages.
 */
export function spawnWsWorker(
  env: Record<string, string>,
  onMessage: (message: unknown, child: ChildProcess) => void = () => undefined,
): Promise<SpawnedWorker> {
  return spawnWorker('ws', env, onMessage);
}

/** Starts an HTTP or WS worker as a separate OS process (see spawnWsWorker). */
export async function spawnWorker(
  kind: 'http' | 'ws',
  env: Record<string, string>,
  onMessage: (message: unknown, child: ChildProcess) => void = () => undefined,
): Promise<SpawnedWorker> {
  const child = fork(CHILD_ENTRY, [], {
    env: { ...process.env, ...env, TB_TEST_WORKER_KIND: kind, NODE_OPTIONS: '' },
    execArgv: ['--import', TS_LOADER],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${kind} worker did not start in 60 s:\n${stderr}`)), 60_000);
    child.on('message', (message) => {
      const listening = message as { tb?: string; url?: string };
      if (listening?.tb === 'listening' && listening.url) {
        clearTimeout(timer);
        resolve(listening.url);
      } else onMessage(message, child);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${kind} worker exited with ${code}:\n${stderr}`));
    });
  });
  return {
    baseUrl: url,
    wsUrl: url.replace(/^http/, 'ws'),
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/** What the worker manager does without Redis: relays every broker message between its children. */
export function relayBetween(children: () => ChildProcess[]): (message: unknown, sender: ChildProcess) => void {
  return (message, sender) => void relayBrokerMessages(message, sender, children);
}

/** A WS worker and an HTTP worker in processes of their own, sharing one database and one broker. */
export interface WorkerPair {
  ws: SpawnedWorker;
  http: SpawnedWorker;
  stop(): Promise<void>;
}

/**
 * Spawns a WS worker, then an HTTP worker (one after the other: both migrate the same database at start), with
 * their broker: Redis on MySQL + Redis, without Redis the parent's IPC relay (the caller plays the worker
 * manager's part).
 */
export async function spawnWorkerPair(backend: Backend): Promise<WorkerPair> {
  const viaRedis = backend.name === 'mysql+redis';
  const environment = await wsWorkerEnvironment(backend, {
    MESSAGE_BROKER: viaRedis ? 'redis' : 'ipc',
    HTTP_WORKER_HOST: '127.0.0.1',
    HTTP_WORKER_PORT: '0',
  });
  const workers: SpawnedWorker[] = [];
  const relay = relayBetween((): ChildProcess[] => workers.map((worker) => worker.child));
  const stop = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await environment.dispose();
  };
  try {
    workers.push(await spawnWorker('ws', environment.env, relay));
    workers.push(await spawnWorker('http', environment.env, relay));
  } catch (error) {
    await stop();
    throw error;
  }
  return { ws: workers[0], http: workers[1], stop };
}

/** A `tb_session` cookie for `user` signed by the worker's own SessionCookies. */
export function sessionCookieFor(
  worker: WsWorkerUnderTest,
  user: { userId: string; username: string; level: number },
): string {
  const sessions = worker.app.get(SessionCookies);
  return `${sessions.cookieName}=${encodeURIComponent(sessions.issue(user).token)}`;
}

/** A platform JWT with any level claim (-1, 0, 1, 2). */
export function tokenWithLevel(user: { userId: string; level: number }, ttlSeconds = 3600): string {
  return new JwtService({}).sign(
    { user_id: user.userId, sub: user.userId, username: user.userId, level: user.level, type: 'access' },
    { secret: TEST_SECRET, algorithm: 'HS256', expiresIn: ttlSeconds },
  );
}

/** A WebSocket client that records every frame and its close, for assertions. */
export class WsClient {
  readonly frames: unknown[] = [];
  closed: { code: number; reason: string } | null = null;
  readonly socket: WebSocket;
  private readonly opened: Promise<void>;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.socket = new WebSocket(url, options);
    this.socket.on('error', () => undefined);
    this.socket.on('message', (data, isBinary) => {
      const text = isBinary ? data : data.toString();
      try {
        this.frames.push(typeof text === 'string' ? JSON.parse(text) : text);
      } catch {
        this.frames.push(text);
      }
    });
    this.opened = new Promise((resolve, reject) => {
      this.socket.once('open', () => resolve());
      this.socket.once('unexpected-response', (_request, response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.once('end', () => {
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode, body }));
        });
      });
      this.socket.once('close', (code, reason) => {
        reject(new Error(`closed ${code} before opening`));
        this.closed = { code, reason: reason.toString() };
      });
    });
    this.socket.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  /** Resolves once the server said `{type: "connected"}`; returns the conn_id. */
  async connected(): Promise<string> {
    await this.opened;
    const frame = (await this.next((candidate) => (candidate as { type?: string })?.type === 'connected')) as {
      conn_id: string;
    };
    return frame.conn_id;
  }

  send(data: unknown): void {
    this.socket.send(typeof data === 'string' ? data : JSON.stringify(data));
  }

  /** The first frame (already received or coming) that `accept` takes. */
  async next(accept: (frame: unknown) => boolean = () => true, timeoutMs = 5000): Promise<unknown> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.frames.find(accept);
      if (found !== undefined) {
        this.frames.splice(this.frames.indexOf(found), 1);
        return found;
      }
      if (Date.now() > deadline) throw new Error(`no matching frame; received ${JSON.stringify(this.frames)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** The close the server sent (code and reason). */
  async closedWith(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('connection still open');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return this.closed;
  }

  close(): void {
    this.socket.close();
  }
}
