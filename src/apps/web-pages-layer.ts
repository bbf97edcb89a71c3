import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { SHARED_ASSETS_MOUNT, type WebPages } from '../common/web-assets.js';

const under = (path: string, route: string) => path === route || path.startsWith(`${route}/`);

/**
 * Whether no handler of `webPagesMiddleware(pages)` can answer a GET of `path`: not the favicon, not under the
 * shared assets, and for every page folder outside its mount or under one of its service routes (`/api/…`).
 */
export function servesNoPage(pages: WebPages[], path: string): boolean {
  if (path === '/favicon.ico' || under(path, SHARED_ASSETS_MOUNT)) return false;
  return pages.every(({ mount, serviceRoutes }) => {
    const prefix = mount.replace(/\/+$/, '');
    if (prefix !== '' && !under(path, prefix)) return true;
    const rest = path.slice(prefix.length);
    return (serviceRoutes ?? []).some((route) => under(rest, route));
  });
}

/**
 * The handlers of `webPagesMiddleware(pages)` as one middleware layer, which a request no page can answer (an API
 * call, any method but GET and HEAD) passes at once. Express matches every layer in turn on every request: as
 * separate layers (favicon, shared assets, each folder) every API request walked through each of them.
 */
export function webPagesLayer(pages: WebPages[], handlers: RequestHandler[]): RequestHandler {
  return (request: Request, response: Response, next: NextFunction) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || servesNoPage(pages, request.path)) return next();
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      if (index === handlers.length) return next();
      // As Express does for a layer: a handler that throws passes its error on.
      try {
        void handlers[index++](request, response, step);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
