import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Result } from './result.js';
import { runHttp } from './run-http.js';

describe('runHttp', () => {
  let server: Server;
  let baseUrl: string;
  const seen: Array<{ method?: string; url?: string; body: string }> = [];

  beforeAll(async () => {
    server = createServer(async (request: IncomingMessage, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      seen.push({ method: request.method, url: request.url, body });
      const path = new URL(request.url ?? '/', 'http://x').pathname;
      if (path === '/api/Calc/wire') {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify(Result.ok({ sum: 3 })));
      } else if (path === '/api/Calc/plain') {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ plain: true }));
      } else if (path === '/api/Calc/text') {
        response.end('not json');
      } else {
        response.statusCode = 404;
        response.end('{"code":"NOT_FOUND"}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends GET kwargs as the query and rebuilds a wire Result', async () => {
    const result = await runHttp('Calc', 'wire', 'GET', [], { a: 1, name: 'x' }, { baseUrl });
    expect(result.get('sum')).toBe(3);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/api/Calc/wire?a=1&name=x' });
  });

  it('sends other methods with kwargs as a JSON body and positional args as args_', async () => {
    await runHttp('Calc', 'wire', 'POST', [5], { a: 1 }, { baseUrl });
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ a: 1, args_: [5] });
  });

  it('wraps other JSON in Result.json', async () => {
    const result = await runHttp('Calc', 'plain', 'GET', [], {}, { baseUrl });
    expect([result.result.data_type, result.get('plain')]).toEqual(['json', true]);
  });

  it('wraps a text reply in Result.text', async () => {
    expect((await runHttp('Calc', 'text', 'GET', [], {}, { baseUrl })).get()).toBe('not json');
  });

  it('turns a non-2xx reply into an InternalError with status and body', async () => {
    const result = await runHttp('Calc', 'missing', 'GET', [], {}, { baseUrl });
    expect([result.error, result.info.exec_code, result.get('status'), result.get('body')]).toEqual([
      'InternalError',
      404,
      404,
      '{"code":"NOT_FOUND"}',
    ]);
  });

  it('turns a transport failure into an InternalError instead of throwing', async () => {
    const result = await runHttp('Calc', 'wire', 'GET', [], {}, { baseUrl: 'http://127.0.0.1:1' });
    expect([result.error, result.info.exec_code, result.get('status')]).toEqual(['InternalError', -2, 0]);
  });
});
