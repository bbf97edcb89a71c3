import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamicModule, INestApplication } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { TokenVerifier } from '../../src/auth/token-verifier.js';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { JOB_QUEUE, type JobQueue } from '../../src/queue/job-queue.js';
import { createHttpApp } from '../../src/apps/create-http-app.js';
import { RegistryAppModule, registryHttpAppOptions } from '../../src/apps/registry.app-module.js';
import type { Backend } from './backends.js';
import { ApiClient } from './api-client.js';

export const TEST_SECRET = 'test-secret-0123456789abcdefghijklmnop';

export interface TestUser {
  id: string;
  username: string;
  email?: string;
  admin?: boolean;
}

export interface RegistryUnderTest {
  baseUrl: string;
  app: INestApplication;
  config: PlatformConfig;
  dataDir: string;
  /** Anonymous client. */
  api: ApiClient;
  token(user: TestUser, ttlSeconds?: number): string;
  as(user: TestUser): ApiClient;
  queue: JobQueue;
  close(): Promise<void>;
}

/**
 * Starts the registry on a free port against a fresh data directory on the given backend. `arrange` may
 * rework the root module before the app is built (the route-order test reverses its imports).
 */
export async function startRegistry(
  backend: Backend,
  env: Record<string, string> = {},
  arrange: (root: DynamicModule) => DynamicModule = (root) => root,
): Promise<RegistryUnderTest> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-e2e-'));
  const provisioned = await backend.provision();
  const config = loadConfig(
    {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      RATE_LIMIT_ANON_PER_HOUR: '100000',
      RATE_LIMIT_AUTH_PER_HOUR: '100000',
      ...provisioned.env,
      ...env,
    },
    { services: ['registry'] },
  );
  const app = await createHttpApp(arrange(RegistryAppModule.forRoot(config)), {
    ...registryHttpAppOptions(config),
    logger: ['error'],
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;
  const signer = new TokenVerifier(new JwtService({}), config);
  const token = (user: TestUser, ttlSeconds = 3600) =>
    signer.sign({ userId: user.id, username: user.username, email: user.email, admin: user.admin, ttlSeconds });
  return {
    baseUrl,
    app,
    config,
    dataDir,
    api: new ApiClient(baseUrl),
    token,
    as: (user) => new ApiClient(baseUrl, token(user)),
    queue: app.get<JobQueue>(JOB_QUEUE),
    async close() {
      await app.close();
      await provisioned.dispose();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
