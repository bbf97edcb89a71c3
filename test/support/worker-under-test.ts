import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { INestApplication } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import {
  startHttpWorkerApp,
  type HttpWorkerAppExtras,
  type RunningHttpWorker,
} from '../../src/apps/http-worker.app-module.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { ApiClient } from './api-client.js';
import type { Backend } from './backends.js';
import { TEST_SECRET, type TestUser } from './registry-under-test.js';

export type WorkerTestUser = Omit<TestUser, 'admin'> & { level?: number };

/** An access token as WorkerAuth mints it (sub, user_id, username, email, level, provider, type, jti). */
export function workerAccessToken(user: WorkerTestUser, ttlSeconds = 3600, secret = TEST_SECRET): string {
  return new JwtService({}).sign(
    {
      sub: user.id,
      user_id: user.id,
      username: user.username,
      email: user.email ?? `${user.username}@example.test`,
      level: user.level ?? 1,
      provider: 'test',
      type: 'access',
      jti: randomUUID(),
    },
    { secret, algorithm: 'HS256', expiresIn: ttlSeconds },
  );
}

export interface HttpWorkerUnderTest {
  baseUrl: string;
  app: INestApplication;
  config: PlatformConfig;
  dataDir: string;
  worker: RunningHttpWorker;
  /** Anonymous client. */
  api: ApiClient;
  /** A platform access token (HS256, PLATFORM_JWT_SECRET, the claims) for `user` at `level` (default 1). */
  token(user: WorkerTestUser, ttlSeconds?: number): string;
  as(user: WorkerTestUser): ApiClient;
  close(): Promise<void>;
}

/**
 * Starts an HTTP worker in this process on a free port, against a fresh data directory on `backend`.
 * `extras.imports` adds modules whose `@Export` functions the worker serves (test mods).
 */
export async function startHttpWorker(
  backend: Backend,
  env: Record<string, string> = {},
  extras: HttpWorkerAppExtras = {},
): Promise<HttpWorkerUnderTest> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-worker-'));
  const provisioned = await backend.provision();
  const config = loadConfig(
    {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      HTTP_WORKER_HOST: '127.0.0.1',
      HTTP_WORKER_PORT: '0',
      APP_ID: 'toolbox-test',
      ...provisioned.env,
      ...env,
    },
    { services: ['httpWorker'] },
  );
  const worker = await startHttpWorkerApp(config, extras, { logger: ['error'] });
  const baseUrl = worker.url;
  const token = (user: WorkerTestUser, ttlSeconds = 3600) => workerAccessToken(user, ttlSeconds);
  return {
    baseUrl,
    app: worker.app,
    config,
    dataDir,
    worker,
    api: new ApiClient(baseUrl),
    token,
    as: (user) => new ApiClient(baseUrl, token(user)),
    async close() {
      await worker.drain(0).catch(() => undefined);
      await provisioned.dispose();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SpawnedHttpWorker {
  baseUrl: string;
  pid: number;
  child: ChildProcess;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal) once the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL if still running (after-all safety net). */
  kill(): void;
}

const REGISTER_TS = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));
const MAIN_TS = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/**
 * Starts `tb worker http --port 0` as a separate OS process (the TypeScript sources, compiled on load by
 * ts-loader.mjs) and resolves once it prints its address. `env` is the worker's whole configuration
 * beyond PATH (PLATFORM_JWT_SECRET defaults to the tests' secret); `nodeArgs` go to Node after the TypeScript
 * loader (a loader hook given there sees the sources too).
 */
export async function spawnHttpWorker(
  env: Record<string, string>,
  args: string[] = [],
  nodeArgs: string[] = [],
): Promise<SpawnedHttpWorker> {
  const child = spawn(
    process.execPath,
    ['--import', REGISTER_TS, ...nodeArgs, MAIN_TS, 'worker', 'http', '--port', '0', ...args],
    {
      env: {
        PATH: process.env.PATH ?? '',
        PLATFORM_JWT_SECRET: TEST_SECRET,
        HTTP_WORKER_HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start within 60 s:\n${output}`)), 60_000);
    const onData = () => {
      const match = /ready at (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker exited before it was ready (${code ?? signal}):\n${output}`));
    });
  });
  return {
    baseUrl,
    pid: child.pid!,
    child,
    output: () => output,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
