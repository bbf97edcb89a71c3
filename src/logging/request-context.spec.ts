import type { NextFunction, Request, Response } from 'express';
import { requestIdMiddleware, requestIdOf } from '../common/request-id.middleware.js';
import { contextCaller, currentRequestId, runInRequestContext, runWithContextCaller } from './request-context.js';

function handle(headers: Record<string, string>): Promise<{ seen: string | undefined; echoed: unknown }> {
  const echoed: Record<string, unknown> = {};
  const response = { setHeader: (name: string, value: unknown) => (echoed[name] = value) } as unknown as Response;
  return new Promise((resolve) => {
    const next: NextFunction = () => {
      // A later middleware or handler, after an await, still sees the id.
      void Promise.resolve().then(() => resolve({ seen: currentRequestId(), echoed: echoed['X-Request-Id'] }));
    };
    requestIdMiddleware({ headers } as Request, response, next);
  });
}

describe('request context', () => {
  it('makes the request id of the middleware current for the rest of the request', async () => {
    const { seen, echoed } = await handle({ 'x-request-id': 'abc-123' });
    expect([seen, echoed]).toEqual(['abc-123', 'abc-123']);
  });

  it('uses the generated id when the caller sent none', async () => {
    const { seen, echoed } = await handle({});
    expect([seen, seen === echoed]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/), true]);
  });

  it('answers the id of the request the middleware saw, and "unknown" for another', () => {
    const request = { headers: { 'x-request-id': 'given-1' } } as unknown as Request;
    const response = { setHeader: () => undefined } as unknown as Response;
    requestIdMiddleware(request, response, () => undefined);
    expect([requestIdOf(request), requestIdOf({ headers: {} }), requestIdOf(undefined)]).toEqual([
      'given-1',
      'unknown',
      'unknown',
    ]);
  });

  it('has no request id outside a request', () => {
    expect(currentRequestId()).toBeUndefined();
  });

  it('keeps the request id inside a caller context, and the request without the caller after it', async () => {
    const caller = { level: 0, userId: null, transport: 'http' };
    const seen = await runInRequestContext('req-1', async () => {
      const inside = runWithContextCaller(caller, () =>
        Promise.resolve().then(() => [currentRequestId(), contextCaller()]),
      );
      return [await inside, [currentRequestId(), contextCaller()]];
    });
    expect(seen).toEqual([
      ['req-1', caller],
      ['req-1', undefined],
    ]);
  });

  it('runs a nested call of another caller as that caller, then restores the outer one', () => {
    const outer = { level: 1, userId: 'u1', transport: 'http' };
    const inner = { level: -1, userId: null, transport: 'local' };
    const seen = runInRequestContext('req-2', () =>
      runWithContextCaller(outer, () => {
        const nested = runWithContextCaller(inner, () => contextCaller());
        const same = runWithContextCaller(outer, () => contextCaller());
        return [nested, same, contextCaller(), currentRequestId()];
      }),
    );
    expect(seen).toEqual([inner, outer, outer, 'req-2']);
    expect(contextCaller()).toBeUndefined();
  });

  it('leaves the context as it was when the body throws', () => {
    const caller = { level: 0, userId: null, transport: 'http' };
    expect(() =>
      runWithContextCaller(caller, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(contextCaller()).toBeUndefined();
  });
});
