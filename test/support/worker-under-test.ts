import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import {
  startHttpWorkerApp,
  type HttpWorkerAppExtras,
  type RunningHttpWorker,
} from '../../src/apps/http-worker.app-module.js';
import { randomUUID } from 'node:crypto';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { ApiClient } from './api-client.js';
import type { Backend } from './backends.js';
import { TEST_SECRET, type TestUser } from './registry-under-test.js';

export type WorkerTestUser = Omit<TestUser, 'admin'> & { level?: number };

/** An access token as WorkerAuth mints it (issue 12: sub, user_id, username, email, level, provider, type, jti). */
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
