import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { PlatformError } from './errors.js';
import { jsonBodyReader, type JsonBodyReaderOptions } from './json-body.js';

/** A server that reads each body with the reader and answers what it got: the body, or the error's kind. */
async function serve(
  limit: number | string,
  options?: JsonBodyReaderOptions,
): Promise<{ url: string; server: Server }> {
  const read = jsonBodyReader(limit, options);
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    read(request as Request, response as unknown as Response).then(
      () => response.end(JSON.stringify({ body: (request as Request).body ?? null })),
      (error: Error & { type?: string; status?: number }) =>
        response.end(
          JSON.stringify(
            error instanceof PlatformError
              ? { platform: error.code, message: error.message }
              : { type: error.type, status: error.status },
          ),
        ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

async function post(url: string, body: string, contentType = 'application/json'): Promise<unknown> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body });
  return answer.json();
}

describe('jsonBodyReader', () => {
  let servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    servers = [];
  });
  async function start(limit: number | string, options?: JsonBodyReaderOptions): Promise<string> {
    const { url, server } = await serve(limit, options);
    servers.push(server);
    return url;
  }

  it('fills request.body from an application/json body', async () => {
    expect(await post(await start('1kb'), '{"a":[1,2]}')).toEqual({ body: { a: [1, 2] } });
  });

  it('leaves a body of another media type unread for the route', async () => {
    expect(await post(await start('1kb'), 'a=1', 'application/x-www-form-urlencoded')).toEqual({ body: null });
  });

  it("fails malformed JSON with body-parser's typed error, which each error format renders (JSON-RPC: -32700)", async () => {
    expect(await post(await start('1kb'), '{"a":')).toEqual({ type: 'entity.parse.failed', status: 400 });
  });

  it('refuses JSON nested deeper than the validation pipe may walk', async () => {
    expect(await post(await start('1mb'), '['.repeat(100) + ']'.repeat(100))).toEqual({
      platform: 'BAD_REQUEST',
      message: 'JSON body nests deeper than 64 levels',
    });
  });

  it("answers an oversized body with body-parser's 413 once read, or with the route's cap as it is passed", async () => {
    const body = JSON.stringify({ text: 'x'.repeat(4096) });
    expect(await post(await start(1024), body)).toEqual({ type: 'entity.too.large', status: 413 });
    expect(await post(await start(1024, { answerPastLimit: true }), body)).toEqual({
      platform: 'PAYLOAD_TOO_LARGE',
      message: 'The request body is larger than this route accepts (1024 bytes)',
    });
  });

  it('needs the cap in bytes to count while reading', () => {
    expect(() => jsonBodyReader('2mb', { answerPastLimit: true })).toThrow(/in bytes/);
  });
});
