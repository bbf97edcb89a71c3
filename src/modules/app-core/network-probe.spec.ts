import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PlatformError } from '../../common/errors.js';
import { NetworkProbe } from './network-probe.js';

function fakeFetch(answering: Set<string>, calls: Array<{ url: string; timeout: boolean }>): typeof fetch {
  return (async (input: string | URL, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, timeout: init?.signal instanceof AbortSignal });
    if (![...answering].some((base) => url.startsWith(base))) throw new TypeError('fetch failed');
    return new Response('{"status":"pong"}', { status: 200 });
  }) as typeof fetch;
}

describe('NetworkProbe base selection', () => {
  it('tries :5000, then :8001, then the configured port, then the remote base', async () => {
    const calls: Array<{ url: string; timeout: boolean }> = [];
    const probe = new NetworkProbe({
      platformBase: 'box',
      platformBasePort: 7000,
      platformRemoteBase: 'https://remote.example/',
      fetch: fakeFetch(new Set(), calls),
    });
    expect(await probe.base()).toBe('https://remote.example');
    expect(calls.map((call) => call.url)).toEqual([
      'http://box:5000/api/ping',
      'http://box:8001/api/ping',
      'http://box:7000/api/ping',
    ]);
    expect(calls.every((call) => call.timeout)).toBe(true);
  });

  it('stops at the first candidate that answers', async () => {
    const calls: Array<{ url: string; timeout: boolean }> = [];
    const probe = new NetworkProbe({
      platformBase: 'box',
      platformBasePort: 7000,
      fetch: fakeFetch(new Set(['http://box:8001']), calls),
    });
    expect(await probe.base()).toBe('http://box:8001');
    expect(calls).toHaveLength(2);
  });

  it('fails when nothing answers and no remote base is set', async () => {
    const probe = new NetworkProbe({ platformBase: 'box', fetch: fakeFetch(new Set(), []) });
    await expect(probe.base()).rejects.toThrow(PlatformError);
  });

  it('gives up on a silent candidate after half a second', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const started = Date.now();
    const probe = new NetworkProbe({
      platformBase: '127.0.0.1',
      platformRemoteBase: 'http://fallback',
      fetch: (async (input: string | URL, init?: RequestInit) => {
        const url = String(input).replace(/:(5000|8001)\//, `:${port}/`);
        return fetch(url, init);
      }) as typeof fetch,
    });
    expect(await probe.base()).toBe('http://fallback');
    const elapsed = Date.now() - started;
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3000);
  });
});

describe('NetworkProbe against a server', () => {
  let server: Server;
  let port: number;
  let geoBody: Record<string, unknown> = { ip: '127.0.0.1', local: true };
  let pings = 0;

  beforeAll(async () => {
    server = createServer((request, response) => {
      response.setHeader('content-type', 'application/json');
      if (request.url === '/api/ping') {
        pings++;
        response.end(JSON.stringify({ status: 'pong' }));
      } else if (request.url === '/api/geo') response.end(JSON.stringify(geoBody));
      else {
        response.statusCode = 404;
        response.end('{}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  // Ports 5000 and 8001 may be taken on a shared machine: point the first two candidates elsewhere.
  const probeFor = () =>
    new NetworkProbe({
      platformBase: '127.0.0.1',
      platformBasePort: port,
      fetch: ((input: string | URL, init?: RequestInit) =>
        fetch(String(input).replace(/:(5000|8001)\//, ':1/'), init)) as typeof fetch,
    });

  it('selects the configured port when the first two do not answer', async () => {
    expect(await probeFor().base()).toBe(`http://127.0.0.1:${port}`);
  });

  it('averages five round trips to whole milliseconds', async () => {
    const probe = probeFor();
    await probe.base();
    pings = 0;
    const measurement = await probe.ping();
    expect(pings).toBe(5);
    expect(measurement.round_trips).toBe(5);
    expect(Number.isInteger(measurement.average_ms)).toBe(true);
  });

  it('keeps only the last ten averages', async () => {
    const probe = probeFor();
    for (let round = 0; round < 12; round++) await probe.ping();
    expect(probe.pingHistory()).toHaveLength(10);
  });

  it('returns the geo answer', async () => {
    geoBody = { ip: '127.0.0.1', local: true };
    expect(await probeFor().geo()).toEqual({ ip: '127.0.0.1', local: true });
  });

  it('fails on a geo answer carrying error', async () => {
    geoBody = { ip: '8.8.8.8', error: 'geolocation unavailable' };
    await expect(probeFor().geo()).rejects.toThrow('geolocation unavailable');
  });
});
