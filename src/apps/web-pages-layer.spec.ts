import { jest } from '@jest/globals';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
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
  const request = (method: string, path: string) => ({ method, path }) as Request;
  const response = {} as Response;
  const recording =
    (calls: string[], name: string, outcome?: unknown): RequestHandler =>
    (_request, _response, next: NextFunction) => {
      calls.push(name);
      if (outcome !== 'answer') next(outcome);
    };

  it('runs the handlers in order until one answers', () => {
    const calls: string[] = [];
    const next = jest.fn();
    const layer = webPagesLayer(REGISTRY, [
      recording(calls, 'a'),
      recording(calls, 'b', 'answer'),
      recording(calls, 'c'),
    ]);
    layer(request('GET', '/packages'), response, next);
    expect(calls).toEqual(['a', 'b']);
    expect(next).not.toHaveBeenCalled();
  });

  it('goes on to the routes when no handler answers', () => {
    const calls: string[] = [];
    const next = jest.fn();
    webPagesLayer(REGISTRY, [recording(calls, 'a'), recording(calls, 'b')])(
      request('GET', '/packages'),
      response,
      next,
    );
    expect(calls).toEqual(['a', 'b']);
    expect(next).toHaveBeenCalledWith();
  });

  it('passes an error on, passed or thrown, without running the later handlers', () => {
    const calls: string[] = [];
    const failure = new Error('disk');
    const next = jest.fn();
    webPagesLayer(REGISTRY, [recording(calls, 'a', failure), recording(calls, 'b')])(
      request('GET', '/'),
      response,
      next,
    );
    expect(next).toHaveBeenCalledWith(failure);
    const throwing: RequestHandler = () => {
      throw failure;
    };
    const nextAfterThrow = jest.fn();
    webPagesLayer(REGISTRY, [throwing, recording(calls, 'c')])(request('GET', '/'), response, nextAfterThrow);
    expect(nextAfterThrow).toHaveBeenCalledWith(failure);
    expect(calls).toEqual(['a']);
  });

  it.each([
    ['GET', '/api/v1/packages/cloudm'],
    ['POST', '/packages'],
  ])('passes %s %s to the routes without running a handler', (method, path) => {
    const calls: string[] = [];
    const next = jest.fn();
    webPagesLayer(REGISTRY, [recording(calls, 'a')])(request(method, path), response, next);
    expect(calls).toEqual([]);
    expect(next).toHaveBeenCalledWith();
  });
});
