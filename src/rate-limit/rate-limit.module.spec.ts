import 'reflect-metadata';
import { request as httpRequest } from 'node:http';
import { Controller, Get, Global, Module, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHttpApp } from '../apps/create-http-app.js';
import { COUNTER_STORE, MemoryCounterStore, type CounterStore } from '../counters/counter-store.js';
import { RateLimitModule } from './rate-limit.module.js';
import { RateLimitGuard, SkipRateLimit } from './rate-limit.guard.js';

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

/** A store that counts elsewhere (as Redis does): only the asynchronous increment. */
function asyncOnly(store: CounterStore): CounterStore {
  return {
    driver: 'redis',
    increment: (key, windowMs) => store.increment(key, windowMs),
    peek: (key) => store.peek(key),
    reset: (key) => store.reset(key),
  };
}

async function serve(
  imports: unknown[],
  options: { trustProxy?: boolean; counters?: CounterStore } = {},
): Promise<{ app: INestApplication; base: string }> {
  @Global()
  @Module({
    providers: [{ provide: COUNTER_STORE, useValue: options.counters ?? new MemoryCounterStore() }],
    exports: [COUNTER_STORE],
  })
  class CountersModule {}
  @Module({ imports: [CountersModule, ...(imports as never[])], controllers: [PingController] })
  class ServiceModule {}
  const app = await createHttpApp(ServiceModule, {
    title: 't',
    description: 't',
    logger: false,
    docsPath: false,
    trustProxy: options.trustProxy,
  });
  await app.listen(0, '127.0.0.1');
  return { app, base: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
}

describe('RateLimitModule', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([
    ['the in-process store (answered without a promise)', undefined],
    ['a store that counts elsewhere (asynchronously, as Redis)', () => asyncOnly(new MemoryCounterStore())],
  ])('limits anonymous callers to the configured hourly count with X-RateLimit headers, with %s', async (_, store) => {
    const served = await serve(
      [RateLimitModule.forRoot({ anonPerHour: 2, authPerHour: 10 })],
      store ? { counters: store() } : {},
    );
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

  /** A GET on a connection of its own (no keep-alive), with the X-Forwarded-For given. */
  const getOnNewConnection = (base: string, forwardedFor: string) =>
    new Promise<{ status: number; limit: string | undefined; remaining: string | undefined }>((resolve, reject) => {
      const request = httpRequest(
        `${base}/ping`,
        { agent: false, headers: { 'x-forwarded-for': forwardedFor } },
        (response) => {
          response.resume();
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              limit: response.headers['x-ratelimit-limit'] as string | undefined,
              remaining: response.headers['x-ratelimit-remaining'] as string | undefined,
            }),
          );
        },
      );
      request.on('error', reject).end();
    });

  it('counts an anonymous caller by its address on every connection, whatever X-Forwarded-For it sends', async () => {
    const served = await serve([RateLimitModule.forRoot({ anonPerHour: 2, authPerHour: 10 })]);
    app = served.app;
    expect(await getOnNewConnection(served.base, '10.0.0.1')).toEqual({ status: 200, limit: '2', remaining: '1' });
    expect(await getOnNewConnection(served.base, '10.0.0.2')).toEqual({ status: 200, limit: '2', remaining: '0' });
    expect((await getOnNewConnection(served.base, '10.0.0.3')).status).toBe(429);
  });

  it('behind a trusted proxy, counts each forwarded address on its own', async () => {
    const served = await serve([RateLimitModule.forRoot({ anonPerHour: 1, authPerHour: 10 })], { trustProxy: true });
    app = served.app;
    expect((await getOnNewConnection(served.base, '10.0.0.1')).status).toBe(200);
    expect((await getOnNewConnection(served.base, '10.0.0.2')).status).toBe(200);
    expect((await getOnNewConnection(served.base, '10.0.0.1')).status).toBe(429);
  });

  it('decides at once, without a promise, with a store that counts in this process', () => {
    const guard = new RateLimitGuard(new Reflector(), new MemoryCounterStore(), { anonPerHour: 1, authPerHour: 10 });
    const headers: Record<string, string> = {};
    const request = { app: { get: () => false }, socket: { remoteAddress: '10.0.0.9' }, headers: {} };
    const response = { setHeader: (name: string, value: string) => (headers[name] = value) };
    const context = {
      getType: () => 'http',
      getHandler: () => PingController.prototype.ping,
      getClass: () => PingController,
      switchToHttp: () => ({ getRequest: () => request, getResponse: () => response }),
    } as unknown as ExecutionContext;
    expect(guard.canActivate(context)).toBe(true);
    expect(headers).toEqual({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '3600' });
    expect(() => guard.canActivate(context)).toThrow('Rate limit of 1 requests per hour exceeded');
  });
});
