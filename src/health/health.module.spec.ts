import 'reflect-metadata';
import { Global, Module, type INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../apps/create-http-app.js';
import { ConfigModule } from '../config/config.module.js';
import type { PlatformConfig } from '../config/config.js';
import { REDIS_CLIENT } from '../counters/counters.module.js';
import { HealthModule, type HealthOptions } from './health.module.js';

const config = { version: '9.9.9' } as PlatformConfig;
let databaseAnswers = true;

/** The world of a worker: a database (answering as the test says) and no Redis, object store or queue. */
@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      useValue: { query: async () => (databaseAnswers ? [{ 1: 1 }] : Promise.reject(new Error('gone'))) },
    },
    { provide: REDIS_CLIENT, useValue: null },
  ],
  exports: [DataSource, REDIS_CLIENT],
})
class WorkerDependencies {}

async function serve(options: HealthOptions): Promise<{ app: INestApplication; base: string }> {
  @Module({ imports: [ConfigModule.forRoot(config), WorkerDependencies, HealthModule.forRoot(options)] })
  class ServiceModule {}
  const app = await createHttpApp(ServiceModule, { title: 't', description: 't', logger: false, docsPath: false });
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

describe('HealthModule.forRoot', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    databaseAnswers = true;
    await app?.close();
    app = undefined;
  });

  it('is ready when the checks the service listed answer, and asks about nothing else', async () => {
    const served = await serve({ checks: ['database'] });
    app = served.app;
    const response = await fetch(`${served.base}/ready`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { status: string; checks: Record<string, { status: string }> };
    expect(body.status).toBe('ready');
    expect(Object.keys(body.checks)).toEqual(['database']);
    expect(body.checks.database.status).toBe('up');
  });

  it('answers 503 naming the listed dependency that failed', async () => {
    const served = await serve({
      checks: ['database', { name: 'model', check: async () => Promise.reject(new Error('no model')) }],
    });
    app = served.app;
    databaseAnswers = false;
    const response = await fetch(`${served.base}/api/v1/ready`);
    expect(response.status).toBe(503);
    const body = (await response.json()) as { failed: string[] };
    expect(body.failed).toEqual(['database', 'model']);
  });

  it('leaves out the redis check when the service has no Redis configured', async () => {
    const served = await serve({ checks: ['database', 'redis'] });
    app = served.app;
    const body = (await (await fetch(`${served.base}/ready`)).json()) as { checks: Record<string, unknown> };
    expect(Object.keys(body.checks)).toEqual(['database']);
  });

  it('serves liveness with the configured version', async () => {
    const served = await serve({ checks: [] });
    app = served.app;
    const response = await fetch(`${served.base}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ok', version: '9.9.9' });
  });

  it('fails at start-up when a listed check needs a dependency the service does not provide', async () => {
    await expect(serve({ checks: ['database', 'storage'] })).rejects.toThrow(
      /"storage" readiness check needs StorageService/,
    );
  });
});
