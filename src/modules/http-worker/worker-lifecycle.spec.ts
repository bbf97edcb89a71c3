import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { HttpWorkerOptions } from './http-worker.options.js';
import { WorkerLifecycle } from './worker-lifecycle.js';
import { WorkerMetrics } from './worker-metrics.js';

const sockets: Socket[] = [];
const waitMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A plain HTTP server watched by a lifecycle; requests to `/slow` wait until `release()`. */
async function watchedServer() {
  const lifecycle = new WorkerLifecycle({ workerId: 'w-spec' } as HttpWorkerOptions, new WorkerMetrics());
  const waiting: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    if (request.url === '/slow') waiting.push(response);
    else response.end('ok');
  });
  lifecycle.watch(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    lifecycle,
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
});
