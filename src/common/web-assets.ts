import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/** A folder of `web/` served at a path: `{ mount: '/admin', folder: 'gateway/admin' }`. */
export interface WebPages {
  mount: string;
  folder: string;
  /**
   * Client-side routes of a single-page folder, relative to the mount (`['/packages']`): a GET of one of these paths
   * or below it that names no file answers with the folder's `index.html`, so a deep link works on reload. Only the
   * listed paths: everything else still falls through to the service's own routes (its API).
   */
  spaRoutes?: string[];
}

/** Where the shared stylesheet and script are served on every service that has pages. */
export const SHARED_ASSETS_MOUNT = '/_tb';

/**
 * Pages may only load what their own origin serves (no CDN: they must work offline on a LAN), never run inline
 * script, and never sit in a frame. `blob:`/`data:` cover recorded audio, uploaded images and their previews.
 */
export const PAGE_SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob: data:; " +
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'self'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'X-Frame-Options': 'DENY',
};

/** The `web/` folder of this package: beside `src/` when run from sources, beside `dist/` when built. */
export function webRoot(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(directory, 'package.json')) && existsSync(join(directory, 'web', 'shared'))) {
      return join(directory, 'web');
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error('the web/ folder of the package was not found');
    directory = parent;
  }
}

/**
 * Static page middleware for a service's pages plus the shared assets. Files are revalidated on every load
 * (`no-cache` + ETag: the names carry no content hash), a folder answers with its `index.html`, a path under one
 * of a folder's `spaRoutes` answers with that `index.html` too, and any other path that is not a file falls through
 * to the service's own routes.
 */
export function webPagesMiddleware(pages: WebPages[], root = webRoot()): RequestHandler[] {
  const all = [{ mount: SHARED_ASSETS_MOUNT, folder: 'shared' }, ...pages];
  return all.map(({ mount, folder, spaRoutes }: WebPages) => {
    const directory = resolve(root, folder);
    if (!directory.startsWith(resolve(root) + sep)) throw new Error(`web folder ${folder} lies outside web/`);
    const headers = { 'Cache-Control': 'no-cache', ...PAGE_SECURITY_HEADERS };
    const serve = express.static(directory, {
      index: 'index.html',
      redirect: true,
      fallthrough: true,
      etag: true,
      lastModified: true,
      dotfiles: 'ignore',
      setHeaders: (response) => {
        for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
      },
    });
    const prefix = mount.replace(/\/+$/, '');
    const isSpaRoute = (path: string) =>
      (spaRoutes ?? []).some((route) => path === route || path.startsWith(`${route}/`));
    return (request: Request, response: Response, next: NextFunction) => {
      if (request.method !== 'GET' && request.method !== 'HEAD') return next();
      const path = request.path;
      if (prefix !== '' && path !== prefix && !path.startsWith(`${prefix}/`)) return next();
      const original = request.url;
      request.url = original.slice(prefix.length) || '/';
      serve(request, response, (error?: unknown) => {
        const route = request.path;
        request.url = original;
        if (error || !isSpaRoute(route)) return next(error);
        response.sendFile(join(directory, 'index.html'), { headers, cacheControl: false, lastModified: true }, next);
      });
    };
  });
}
