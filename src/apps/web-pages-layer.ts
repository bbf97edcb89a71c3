import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { SHARED_ASSETS_MOUNT, type WebPages } from '../common/web-assets.js';

/** A path and everything below it: `/api` covers `/api` and `/api/…`, not `/apis`. */
function below(route: string): (path: string) => boolean {
  const folder = `${route}/`;
  return (path) => path === route || path.startsWith(folder);
}

/**
 * Whether no handler of `webPagesMiddleware(pages)` can answer a GET of a path: not the favicon, not under the
 * shared assets, and for every page folder outside its mount or under one of its service routes (`/api/…`).
 * Built once per app: it runs on every request.
 */
export function pathsWithoutPages(pages: WebPages[]): (path: string) => boolean {
  const sharedAssets = below(SHARED_ASSETS_MOUNT);
  const folders = pages.map(({ mount, serviceRoutes }) => {
    const prefix = mount.replace(/\/+$/, '');
    return { prefix, inMount: prefix === '' ? null : below(prefix), services: (serviceRoutes ?? []).map(below) };
  });
  return (path) => {
    if (path === '/favicon.ico' || sharedAssets(path)) return false;
    for (const { prefix, inMount, services } of folders) {
      if (inMount !== null && !inMount(path)) continue;
      const rest = prefix === '' ? path : path.slice(prefix.length);
      if (!services.some((service) => service(rest))) return false;
    }
    return true;
  };
}

/**
 * The handlers of `webPagesMiddleware(pages)` as one middleware layer, which a request no page can answer (an API
 * call, any method but GET and HEAD) passes at once. Express matches every layer in turn on every request: as
 * separate layers (favicon, shared assets, each folder) every API request walked through each of them. The others
 * reach the handlers on an Express router of their own, in order, with Express's own rules (an error passed or
 * thrown skips the later handlers and goes on to the app's error handling; no handler answering goes on to the routes).
 */
export function webPagesLayer(pages: WebPages[], handlers: RequestHandler[]): RequestHandler {
  const servesNoPage = pathsWithoutPages(pages);
  const router = express.Router();
  for (const handler of handlers) router.use(handler);
  return (request: Request, response: Response, next: NextFunction) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || servesNoPage(request.path)) return next();
    router(request, response, next);
  };
}
