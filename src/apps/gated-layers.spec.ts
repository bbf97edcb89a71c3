import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import express, { type Request } from 'express';
import { gateLayers, mayBeDocsRequest } from './gated-layers.js';

/** An Express app seen as Nest sees it (`getHttpAdapter().getInstance()`), with a layer before and after the gate. */
function appWithGate(mayAnswer: (request: Request) => boolean, calls: string[]) {
  const instance = express();
  instance.use((_request, _response, next) => {
    calls.push('before');
    next();
  });
  const app = { getHttpAdapter: () => ({ getInstance: () => instance }) } as unknown as INestApplication;
  gateLayers(app, mayAnswer, () => {
    instance.get('/docs/api', (_request, response) => void response.send('ui'));
    instance.use('/docs/api', (request, response, next) => {
      calls.push(`files ${request.url}`);
      if (request.url === '/ui.css') response.send('css');
      else next();
    });
    instance.use((request, _response, next) => {
      calls.push('headers');
      next();
    });
  });
  instance.use((request, response) => {
    calls.push('after');
    response.status(404).send(`none ${request.method} ${request.url}`);
  });
  return instance;
}

async function serve(instance: express.Express): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = await new Promise((resolve) => {
    const listening = instance.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('gateLayers', () => {
  it('puts the layers `register` added behind one layer, in their place', () => {
    const instance = appWithGate(() => true, []);
    const stack = (instance as unknown as { router: { stack: unknown[] } }).router.stack;
    expect(stack).toHaveLength(3);
  });

  it('runs a request the gate lets in through the layers as before; one it keeps out passes them at once', async () => {
    const calls: string[] = [];
    const server = await serve(appWithGate((request) => request.path.startsWith('/docs'), calls));
    try {
      expect(await (await fetch(`${server.url}/docs/api`)).text()).toBe('ui');
      expect(calls.splice(0)).toEqual(['before']);
      expect(await (await fetch(`${server.url}/docs/api/ui.css`)).text()).toBe('css');
      expect(calls.splice(0)).toEqual(['before', 'files /ui.css']);
      // Through every gated layer, then on to the next one of the app with the URL as it came.
      expect(await (await fetch(`${server.url}/docs/api/other?x=1`)).text()).toBe('none GET /docs/api/other?x=1');
      expect(calls.splice(0)).toEqual(['before', 'files /other?x=1', 'headers', 'after']);
      expect(await (await fetch(`${server.url}/api/bench/fn`)).text()).toBe('none GET /api/bench/fn');
      expect(calls.splice(0)).toEqual(['before', 'after']);
    } finally {
      await server.close();
    }
  });

  it('adds nothing when `register` adds no layer', () => {
    const instance = express();
    const app = { getHttpAdapter: () => ({ getInstance: () => instance }) } as unknown as INestApplication;
    gateLayers(
      app,
      () => true,
      () => undefined,
    );
    expect((instance as unknown as { router: { stack: unknown[] } }).router.stack).toHaveLength(0);
  });
});

describe('mayBeDocsRequest', () => {
  const mayBeDocs = mayBeDocsRequest('docs/api');
  it.each([
    ['GET', '/docs/api', true],
    ['GET', '/docs/api/', true],
    ['HEAD', '/docs/api/swagger-ui.css', true],
    ['GET', '/docs/api-json', true],
    ['GET', '/docs/api-yaml', true],
    // Express matches routes case-insensitively.
    ['GET', '/DOCS/Api-JSON', true],
    ['POST', '/docs/api-json', false],
    ['OPTIONS', '/docs/api', false],
    ['GET', '/api/bench/openTrivial', false],
    ['GET', '/docs', false],
    ['GET', '/x/docs/api', false],
  ])('%s %s → %s', (method, path, expected) => {
    expect(mayBeDocs({ method, path } as Request)).toBe(expected);
  });

  it('reads the path literally (no pattern)', () => {
    expect(mayBeDocsRequest('a.b')({ method: 'GET', path: '/axb' } as Request)).toBe(false);
  });
});
