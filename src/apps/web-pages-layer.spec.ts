import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { WebPages } from '../common/web-assets.js';
import { pathsWithoutPages, webPagesLayer } from './web-pages-layer.js';

const REGISTRY: WebPages[] = [{ mount: '/', folder: 'registry', serviceRoutes: ['/api', '/health'] }];
const ADMIN: WebPages[] = [{ mount: '/admin', folder: 'gateway/admin', serviceRoutes: ['/api'] }];

describe('pathsWithoutPages', () => {
  it.each([
    [REGISTRY, '/api/v1/packages/cloudm', true],
    [REGISTRY, '/api', true],
    [REGISTRY, '/health', true],
    [REGISTRY, '/apis', false],
    [REGISTRY, '/packages/cloudm', false],
    [REGISTRY, '/', false],
    [REGISTRY, '/favicon.ico', false],
    [REGISTRY, '/_tb/shared.css', false],
    [ADMIN, '/v1/chat', true],
    [ADMIN, '/admin/api/users', true],
    [ADMIN, '/admin/users', false],
    [ADMIN, '/administrator', true],
    [[...REGISTRY, ...ADMIN], '/admin/api/users', false],
    [[{ mount: '/', folder: 'x' }], '/api/v1', false],
  ] as Array<[WebPages[], string, boolean]>)('%j: %s → %s', (pages, path, expected) => {
    expect(pathsWithoutPages(pages)(path)).toBe(expected);
  });
});

describe('webPagesLayer', () => {
  /** An Express app with the layer in front of a route answering "route" for every path. */
  async function serve(handlers: RequestHandler[]): Promise<{ base: string; close(): Promise<void> }> {
    const app = express();
    app.use(webPagesLayer(REGISTRY, handlers));
    app.use((_request: Request, response: Response) => void response.send('route'));
    app.use((error: Error, _request: Request, response: Response, _next: NextFunction) => {
      response.status(500).send(`error: ${error.message}`);
    });
    const server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    return {
      base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
  const recording =
    (calls: string[], name: string, outcome?: unknown): RequestHandler =>
    (_request, response, next: NextFunction) => {
      calls.push(name);
      if (outcome === 'answer') response.send(name);
      else next(outcome);
    };
  const answer = async (base: string, method: string, path: string) => {
    const response = await fetch(`${base}${path}`, { method });
    return `${response.status} ${await response.text()}`;
  };

  it('runs the handlers in order until one answers', async () => {
    const calls: string[] = [];
    const served = await serve([recording(calls, 'a'), recording(calls, 'b', 'answer'), recording(calls, 'c')]);
    try {
      expect(await answer(served.base, 'GET', '/packages')).toBe('200 b');
      expect(calls).toEqual(['a', 'b']);
    } finally {
      await served.close();
    }
  });

  it('goes on to the routes when no handler answers', async () => {
    const calls: string[] = [];
    const served = await serve([recording(calls, 'a'), recording(calls, 'b')]);
    try {
      expect(await answer(served.base, 'GET', '/packages')).toBe('200 route');
      expect(calls).toEqual(['a', 'b']);
    } finally {
      await served.close();
    }
  });

  it('passes an error on, passed or thrown, without running the later handlers', async () => {
    const calls: string[] = [];
    const throwing: RequestHandler = () => {
      throw new Error('thrown');
    };
    const passing = await serve([recording(calls, 'a', new Error('disk')), recording(calls, 'b')]);
    const thrown = await serve([throwing, recording(calls, 'c')]);
    try {
      expect(await answer(passing.base, 'GET', '/')).toBe('500 error: disk');
      expect(await answer(thrown.base, 'GET', '/')).toBe('500 error: thrown');
      expect(calls).toEqual(['a']);
    } finally {
      await passing.close();
      await thrown.close();
    }
  });

  it.each([
    ['GET', '/api/v1/packages/cloudm'],
    ['POST', '/packages'],
  ])('passes %s %s to the routes without running a handler', async (method, path) => {
    const calls: string[] = [];
    const served = await serve([recording(calls, 'a', 'answer')]);
    try {
      expect(await answer(served.base, method, path)).toBe('200 route');
      expect(calls).toEqual([]);
    } finally {
      await served.close();
    }
  });
});
