import type { INestApplication } from '@nestjs/common';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

type ExpressRouter = RequestHandler & { stack: unknown[] };

/**
 * Runs `register` (which adds layers to the app's Express stack: Swagger's routes and files, the CORS middleware) and
 * puts the layers it added behind one layer: a request for which `mayAnswer` is false passes on at once, any other
 * goes through them as before, in the same place of the stack. Express matches every layer in turn on every request;
 * Swagger's ten layers came before every route of the services, so each API call paid ten path matches for them.
 *
 * `mayAnswer` must be true for every request one of the added layers can answer or change (a superset is fine).
 */
export function gateLayers(
  app: INestApplication,
  mayAnswer: (request: Request) => boolean,
  register: () => void,
): void {
  const instance = app.getHttpAdapter().getInstance() as express.Express & { router: ExpressRouter };
  const stack = instance.router.stack;
  const start = stack.length;
  register();
  if (stack.length === start) return;
  const gated = express.Router() as unknown as ExpressRouter;
  gated.stack.push(...stack.splice(start));
  instance.use((request: Request, response: Response, next: NextFunction) => {
    if (!mayAnswer(request)) return next();
    gated(request, response, next);
  });
}

/**
 * Whether a request may be for Swagger's pages or document at `/<path>` (the UI, its files, `/<path>-json` and
 * `-yaml`): a GET or HEAD (the only methods they answer) of a path starting with `/<path>`, compared as Express
 * does (case-insensitively, the path as sent).
 */
export function mayBeDocsRequest(path: string): (request: Request) => boolean {
  const prefix = new RegExp(`^/${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'i');
  return (request) => (request.method === 'GET' || request.method === 'HEAD') && prefix.test(request.path);
}
