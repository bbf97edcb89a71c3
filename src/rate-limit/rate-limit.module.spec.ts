import 'reflect-metadata';
import { Controller, Get, Global, Module, type INestApplication } from '@nestjs/common';
import { createHttpApp } from '../apps/create-http-app.js';
import { COUNTER_STORE, MemoryCounterStore } from '../counters/counter-store.js';
import { RateLimitModule } from './rate-limit.module.js';
import { SkipRateLimit } from './rate-limit.guard.js';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return { ok: true };
  }

  @Get('probe')
  @SkipRateLimit()
  probe() {
    return { ok: true };
  }
}

@Global()
@Module({ providers: [{ provide: COUNTER_STORE, useValue: new MemoryCounterStore() }], exports: [COUNTER_STORE] })
class MemoryCountersModule {}

async function serve(imports: unknown[]): Promise<{ app: INestApplication; base: string }> {
  @Module({ imports: [MemoryCountersModule, ...(imports as never[])], controllers: [PingController] })
  class ServiceModule {}
  const app = await createHttpApp(ServiceModule, { title: 't', description: 't', logger: false, docsPath: false });
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

describe('RateLimitModule', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('limits anonymous callers to the configured hourly count with X-RateLimit headers', async () => {
    const served = await serve([RateLimitModule.forRoot({ anonPerHour: 2, authPerHour: 10 })]);
    app = served.app;
    const first = await fetch(`${served.base}/ping`);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await fetch(`${served.base}/ping`)).status).toBe(200);
    const third = await fetch(`${served.base}/ping`);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await third.json()) as { code: string }).code).toBe('RATE_LIMITED');
  });

  it('does not count routes marked @SkipRateLimit()', async () => {
    const served = await serve([RateLimitModule.forRoot({ anonPerHour: 1, authPerHour: 1 })]);
    app = served.app;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${served.base}/probe`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });

  it('installs no limit in a service that does not import it', async () => {
    const served = await serve([]);
    app = served.app;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${served.base}/ping`);
      expect(response.status).toBe(200);
      expect(response.headers.get('x-ratelimit-limit')).toBeNull();
    }
  });
});
