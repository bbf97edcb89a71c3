import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Request, Response } from 'express';
import type { HttpWorkerOptions } from './http-worker.options.js';
import { WorkerLifecycle } from './worker-lifecycle.js';
import { WorkerMetrics } from './worker-metrics.js';

const sockets: Socket[] = [];
const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A plain HTTP server watched by a lifecycle, each request counted by its `track` middleware but `/untracked` (as a
 * CORS preflight answered before it); requests to `/slow` wait until `release()`.
 */
async function watchedServer() {
  const metrics = new WorkerMetrics();
  const lifecycle = new WorkerLifecycle({ workerId: 'w-spec' } as HttpWorkerOptions, metrics);
  const waiting: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const answer = () => {
      if (request.url === '/slow') waiting.push(response);
      else response.end('ok');
    };
    if (request.url === '/untracked') answer();
    else lifecycle.track(request as Request, response as Response, answer);
  });
  lifecycle.watch(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    lifecycle,
    metrics,
    release: () => waiting.splice(0).forEach((response) => response.end('slow')),
    /** A raw keep-alive connection; `get(path)` resolves with the answer's head. */
    async open() {
      const socket: Socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      sockets.push(socket);
      const get = (path: string) =>
        new Promise<string>((resolve) => {
          let text = '';
          const onData = (chunk: Buffer) => {
            text += chunk.toString();
            if (/\r\n\r\n[a-z]+$/.test(text)) {
              socket.off('data', onData);
              resolve(text.split('\r\n\r\n')[0]);
            }
          };
          socket.on('data', onData);
          socket.write(`GET ${path} HTTP/1.1\r\nHost: spec\r\n\r\n`);
        });
      return { socket, get };
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('WorkerLifecycle connections', () => {
  it('keeps connections alive until draining, then closes each after its answer, one in progress too', async () => {
    const server = await watchedServer();
    try {
      const { get } = await server.open();
      expect(await get('/')).not.toMatch(/connection: close/i);
      const slow = get('/slow');
      await waitMs(50);
      server.lifecycle.startDraining();
      server.release();
      expect(await slow).toMatch(/\r\nConnection: close/i);
      const other = await server.open();
      expect(await other.get('/')).toMatch(/\r\nConnection: close/i);
    } finally {
      await server.close();
    }
  });

  it('counts a connection quiet only once it has been idle for the given time', async () => {
    const server = await watchedServer();
    try {
      const { get } = await server.open();
      await get('/');
      const answeredAt = Date.now();
      expect(await server.lifecycle.whenConnectionsQuiet(400, 100)).toBe(false);
      expect(await server.lifecycle.whenConnectionsQuiet(400, 2000)).toBe(true);
      expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(400);
    } finally {
      await server.close();
    }
  });

  it('never counts a connection busy with a request as quiet', async () => {
    const server = await watchedServer();
    try {
      const { get } = await server.open();
      const slow = get('/slow');
      await waitMs(50);
      expect(await server.lifecycle.whenConnectionsQuiet(0, 200)).toBe(false);
      server.release();
      await slow;
      expect(await server.lifecycle.whenConnectionsQuiet(0, 200)).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('is quiet at once when the peer closed its connections', async () => {
    const server = await watchedServer();
    try {
      const { socket, get } = await server.open();
      await get('/');
      socket.end();
      await waitMs(50);
      const started = Date.now();
      expect(await server.lifecycle.whenConnectionsQuiet(60_000, 1000)).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
    } finally {
      await server.close();
    }
  });

  it('counts each tracked request once until its answer, and a connection lost before it as 499', async () => {
    const server = await watchedServer();
    const counts = () =>
      server.metrics.snapshot({ workerId: 'w-spec', inFlight: server.lifecycle.inFlight, draining: false });
    try {
      const { get } = await server.open();
      await get('/');
      await get('/untracked');
      const lost = await server.open();
      void lost.get('/slow');
      await waitMs(50);
      expect([server.lifecycle.inFlight, counts().requests_total]).toEqual([1, 1]);
      lost.socket.destroy();
      await waitMs(50);
      const after = counts();
      expect([after.in_flight, after.requests_total, after.requests_success, after.requests_error]).toEqual([
        0, 2, 1, 1,
      ]);
      expect(await server.lifecycle.whenIdle(0)).toBe(true);
    } finally {
      server.release();
      await server.close();
    }
  });
});
