import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { backends } from '../../support/backends.js';
import { declaredRouteAccess } from '../../support/route-access.js';
import { HttpWorkerTestModsModule } from '../../support/http-worker-test-mods.js';
import { startHttpWorker, type HttpWorkerUnderTest } from '../../support/worker-under-test.js';

/** A response body as JSON (any: the suites check its shape). */
const json = (response: Response): Promise<any> => response.json();

describe.each(backends())('HTTP worker routes ($name)', (backend) => {
  let worker: HttpWorkerUnderTest;
  const url = (path: string) => `${worker.baseUrl}${path}`;

  beforeAll(async () => {
    worker = await startHttpWorker(
      backend,
      {
        WORKER_ID: 'w-routes',
        CORS_ORIGINS: 'https://app.example.com',
        CLIENT_LOG_MAX_BYTES: '2048',
        // As behind the manager's nginx on loopback.
        TRUST_PROXY: 'loopback',
      },
      { imports: [HttpWorkerTestModsModule] },
    );
  });
  afterAll(() => worker?.close());

  it('/health: healthy, worker id, pid, timestamp; /ready checks the dependencies', async () => {
    const health = await fetch(url('/health'));
    expect(health.status).toBe(200);
    const body = await json(health);
    expect(body).toEqual({ status: 'healthy', worker_id: 'w-routes', pid: process.pid, timestamp: expect.any(String) });
    expect(Math.abs(Date.parse(body.timestamp) - Date.now())).toBeLessThan(60_000);
    const ready = await fetch(url('/ready'));
    expect(ready.status).toBe(200);
    expect(Object.keys((await json(ready)).checks)).toEqual(
      backend.name === 'sqlite' ? ['database'] : ['database', 'redis'],
    );
  });

  it('/metrics counts requests, successes, errors, auth failures and denials; Prometheus text too', async () => {
    const before = (await json(await fetch(url('/metrics')))) as Record<string, number>;
    await fetch(url('/api/Access/open_anyone'));
    await fetch(url('/api/Access/member'));
    await fetch(url('/api/Access/trusted'), {
      headers: { authorization: `Bearer ${worker.token({ id: 'usr_m', username: 'm', level: 1 })}` },
    });
    await fetch(url('/api/Worker.Test/boom'), {
      headers: { authorization: `Bearer ${worker.token({ id: 'usr_m', username: 'm', level: 1 })}` },
    });
    const after = (await json(await fetch(url('/metrics')))) as Record<string, number | string | boolean>;
    expect(after).toMatchObject({ worker_id: 'w-routes', pid: process.pid, draining: false, in_flight: 1 });
    // The first /metrics call is counted too: 5 requests between the two snapshots.
    expect(Number(after.requests_total) - before.requests_total).toBe(5);
    expect(Number(after.requests_success) - before.requests_success).toBe(2);
    expect(Number(after.requests_error) - before.requests_error).toBe(3);
    expect(Number(after.requests_server_error) - before.requests_server_error).toBe(1);
    expect(Number(after.auth_failures) - before.auth_failures).toBe(1);
    expect(Number(after.access_denials) - before.access_denials).toBe(1);
    expect(Number(after.avg_latency_ms)).toBeGreaterThan(0);
    // Only a request a proxy forwarded (X-Forwarded-For) counts as proxied: none of the five above.
    expect(after.requests_proxied).toBe(before.requests_proxied);
    await fetch(url('/api/Access/open_anyone'), { headers: { 'x-forwarded-for': '203.0.113.9' } });
    const proxied = (await json(await fetch(url('/metrics')))) as Record<string, number>;
    expect(proxied.requests_proxied - before.requests_proxied).toBe(1);

    const prometheus = await fetch(url('/metrics/prometheus'));
    expect(prometheus.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await prometheus.text();
    expect(text).toContain('# TYPE tb_http_requests_total counter');
    const total = /^tb_http_requests_total\{worker_id="w-routes"\} (\d+)$/m.exec(text);
    expect(Number(total?.[1])).toBeGreaterThanOrEqual(Number(after.requests_total));
  });

  it('/api/ping, /api/geo and /api/ip', async () => {
    expect(await json(await fetch(url('/api/ping')))).toMatchObject({ status: 'pong' });
    expect(await json(await fetch(url('/api/geo')))).toMatchObject({ ip: '127.0.0.1', local: true });
    expect(await json(await fetch(url('/api/ip')))).toEqual({ ip: '127.0.0.1', local: true });
    // Behind the reverse proxy on loopback, the forwarded address counts.
    const proxied = await fetch(url('/api/ip'), { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(await json(proxied)).toEqual({ ip: '203.0.113.9', local: false });
  });

  describe('POST /api/client-logs', () => {
    it('writes the entries to the log, bounded, with control characters neutralised', async () => {
      const lines: string[] = [];
      const spies = (['log', 'error', 'warn', 'debug'] as const).map((level) =>
        jest.spyOn(Logger.prototype, level).mockImplementation(function (this: Logger, message: unknown) {
          lines.push(`${level}:${String(message)}`);
        }),
      );
      try {
        const response = await fetch(url('/api/client-logs'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            logs: [
              {
                level: 'error',
                message: 'TypeError: x is undefined',
                source: 'app.js',
                timestamp: '2026-11-23T10:00:00Z',
              },
              { level: 'warning', message: 'slow\nFAKE LINE' },
              'plain text',
              { nothing: true },
            ],
          }),
        });
        expect(response.status).toBe(200);
        expect(await json(response)).toEqual({ status: 'ok', ingested: 3, dropped: 1 });
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
      expect(lines).toEqual([
        'error:[anonymous at 127.0.0.1 app.js 2026-11-23T10:00:00Z] TypeError: x is undefined',
        'warn:[anonymous at 127.0.0.1] slow FAKE LINE',
        'log:[anonymous at 127.0.0.1] plain text',
      ]);
    });

    it('refuses a body over CLIENT_LOG_MAX_BYTES (413) and a body that is no log list (400)', async () => {
      const big = await fetch(url('/api/client-logs'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ logs: [{ message: 'x'.repeat(4096) }] }),
      });
      expect(big.status).toBe(413);
      const wrong = await fetch(url('/api/client-logs'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hello: 1 }),
      });
      expect(wrong.status).toBe(400);
      expect(await json(wrong)).toMatchObject({ error: 'InputError', info: { exec_code: 400 } });
    });
  });

  describe('CORS', () => {
    const preflight = (origin: string) =>
      fetch(url('/api/Worker.Test/echo'), {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });

    it.each([
      'tauri://localhost',
      'http://tauri.localhost',
      'https://tauri.localhost',
      'http://localhost:5173',
      'http://localhost',
      'https://127.0.0.1:8443',
      'https://app.example.com',
    ])('reflects %s with credentials', async (origin) => {
      const response = await preflight(origin);
      expect(response.status).toBeLessThan(300);
      expect(response.headers.get('access-control-allow-origin')).toBe(origin);
      expect(response.headers.get('access-control-allow-credentials')).toBe('true');
      expect(response.headers.get('access-control-max-age')).toBe('86400');
      const simple = await fetch(url('/api/Worker.Test/hello'), { headers: { origin } });
      expect(simple.headers.get('access-control-allow-origin')).toBe(origin);
    });

    it.each(['https://evil.example', 'http://localhost.evil.example', 'http://127.0.0.1.nip.io', 'null'])(
      'does not reflect %s',
      async (origin) => {
        const response = await preflight(origin);
        expect(response.headers.get('access-control-allow-origin')).toBeNull();
      },
    );
  });

  it('declares every route public at the route level (/api/{module}/{function} decides per function), WorkerAuth logins ignoring credentials', () => {
    const PUBLIC = 'session-cookie|jwt: public';
    const LOGIN = 'ignores credentials';
    const SESSION = 'session-cookie|jwt: authenticated';
    expect(declaredRouteAccess(worker.app)).toEqual({
      'GET /health': PUBLIC,
      'HEAD /health': PUBLIC,
      'GET /ready': PUBLIC,
      'GET /api/v1/ready': PUBLIC,
      'GET /metrics': PUBLIC,
      'GET /metrics/prometheus': PUBLIC,
      'GET /api/ping': PUBLIC,
      'GET /api/geo': PUBLIC,
      'GET /api/ip': PUBLIC,
      'POST /api/client-logs': PUBLIC,
      'GET /api/:module/:function': PUBLIC,
      'POST /api/:module/:function': PUBLIC,
      'PUT /api/:module/:function': PUBLIC,
      'DELETE /api/:module/:function': PUBLIC,
      'ALL /api/:module/:function': PUBLIC,
      // WorkerAuth (docs/auth.md): logins ignore a stale credential; session routes need one.
      'POST /validateSession': LOGIN,
      'GET /IsValidSession': SESSION,
      'GET /api_user_data': SESSION,
      'POST /web/logoutS': LOGIN,
      'POST /auth/refresh': LOGIN,
      'GET /auth/:provider/url': LOGIN,
      'GET /auth/:provider/callback': LOGIN,
      'POST /auth/magic/request': LOGIN,
      'GET /auth/magic/verify': LOGIN,
      'POST /auth/magic/verify': LOGIN,
    });
  });

  it('documents its routes at /docs/api (Swagger UI) and /docs/api-json', async () => {
    expect((await fetch(url('/docs/api'))).status).toBe(200);
    const document = await json(await fetch(url('/docs/api-json')));
    const paths = Object.keys(document.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/health',
        '/ready',
        '/metrics',
        '/metrics/prometheus',
        '/api/ping',
        '/api/geo',
        '/api/ip',
        '/api/client-logs',
        '/api/{module}/{function}',
      ]),
    );
    const operation = document.paths['/api/{module}/{function}'];
    expect(Object.keys(operation).sort()).toEqual(['delete', 'get', 'post', 'put']);
    expect(Object.keys(operation.get.responses).sort()).toEqual(['200', '401', '403', '404', '405', '413', '500']);
    // The probe answers are typed, not examples only.
    const geo = document.paths['/api/geo'].get.responses['200'].content['application/json'].schema;
    expect(geo.$ref).toBe('#/components/schemas/GeoAnswerDto');
    expect(Object.keys(document.components.schemas.GeoAnswerDto.properties)).toEqual(
      expect.arrayContaining(['ip', 'local', 'country', 'city', 'timezone', 'attribution', 'error']),
    );
    expect(document.paths['/api/ping'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/PingDto',
    );
  });

  // Last: the worker stays in the draining state afterwards.
  it('while draining: /health and HEAD /health answer 503, every answer carries Connection: close', async () => {
    worker.worker.lifecycle.startDraining();
    const health = await fetch(url('/health'));
    expect(health.status).toBe(503);
    expect(health.headers.get('connection')).toBe('close');
    expect(await json(health)).toMatchObject({ status: 'draining', worker_id: 'w-routes' });
    expect((await fetch(url('/health'), { method: 'HEAD' })).status).toBe(503);
    const ping = await fetch(url('/api/ping'));
    expect([ping.status, ping.headers.get('connection')]).toEqual([200, 'close']);
    expect(await json(await fetch(url('/metrics')))).toMatchObject({ draining: true });
  });
});
