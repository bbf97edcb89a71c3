import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import { readRequestArguments } from './request-kwargs.js';

/**
 * The multipart reader against a real socket: a client that gives up before the worker starts reading (a busy
 * worker) must still settle the call at once, with nothing left in the upload directory.
 */
describe('readRequestArguments (multipart)', () => {
  let uploadDir: string;
  let server: Server;
  let outcome: Promise<{ error?: Error; settledAfterMs: number }> | undefined;

  beforeEach(async () => {
    uploadDir = await mkdtemp(join(tmpdir(), 'tb-kwargs-'));
    outcome = undefined;
  });

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await rm(uploadDir, { recursive: true, force: true });
  });

  const listen = (handler: (request: Request, response: Response) => void) =>
    new Promise<number>((resolve) => {
      server = createServer((request, response) =>
        // What Express adds before the reader runs: the parsed query string.
        handler(Object.assign(request, { query: {} }) as unknown as Request, response as unknown as Response),
      );
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
    });

  /** Sends the multipart head and half a file, then destroys the socket. */
  const abortMidFile = (port: number) => {
    const boundary = 'tb-boundary';
    const client = httpRequest({
      port,
      method: 'POST',
      path: '/',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000' },
    });
    client.on('error', () => undefined);
    client.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n\r\n`);
    client.write(Buffer.alloc(1000, 1), () => setTimeout(() => client.destroy(), 50));
  };

  it('settles when the client aborted before the reader started, leaving no upload behind', async () => {
    const port = await listen((request, response) => {
      // The worker gets to the body only after the client is gone.
      outcome = new Promise((resolve) =>
        request.on('close', () => {
          const started = Date.now();
          readRequestArguments(request, response, { uploadDir, uploadMaxBytes: 1 << 20, bodyLimitBytes: 1 << 16 })
            .then(async (args) => {
              await args.cleanup();
              resolve({ settledAfterMs: Date.now() - started });
            })
            .catch((error: Error) => resolve({ error, settledAfterMs: Date.now() - started }));
        }),
      );
    });
    abortMidFile(port);
    while (!outcome) await new Promise((resolve) => setTimeout(resolve, 10));
    const settled = await Promise.race([
      outcome,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000)),
    ]);
    expect(settled).not.toBeNull();
    expect(settled!.error?.message).toContain('aborted');
    expect(await readdir(uploadDir)).toEqual([]);
  });

  it('settles when the client aborts mid-file while the reader runs, leaving no upload behind', async () => {
    const port = await listen((request, response) => {
      const started = Date.now();
      outcome = readRequestArguments(request, response, {
        uploadDir,
        uploadMaxBytes: 1 << 20,
        bodyLimitBytes: 1 << 16,
      }).then(
        async (args) => {
          await args.cleanup();
          return { settledAfterMs: Date.now() - started };
        },
        (error: Error) => ({ error, settledAfterMs: Date.now() - started }),
      );
    });
    abortMidFile(port);
    while (!outcome) await new Promise((resolve) => setTimeout(resolve, 10));
    const settled = await outcome;
    expect(settled.error?.message).toContain('aborted');
    expect(await readdir(uploadDir)).toEqual([]);
  });
});
