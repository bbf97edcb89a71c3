import type { NextFunction, Request, Response } from 'express';
import { requestIdMiddleware } from '../common/request-id.middleware.js';
import { currentRequestId } from './request-context.js';

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

  it('has no request id outside a request', () => {
    expect(currentRequestId()).toBeUndefined();
  });
});
