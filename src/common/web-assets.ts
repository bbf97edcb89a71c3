import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
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
  /**
   * Single-page folders only: where the visitor's browser sees the mount (`/tb/` when a proxy publishes the service
   * under a path prefix; the mount itself by default). The index page carries it as `<base href>`, so the page's
   * relative asset, API and link addresses work at any depth and behind the prefix.
   */
  baseHref?: string;
  /**
   * Paths of the service's own routes under the mount (`['/api', '/health']` for pages mounted at `/`): a request
   * at or below one goes straight on to the routes, without a file being looked up on disk for it first.
   */
  serviceRoutes?: string[];
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
  return [
    sharedFavicon(join(root, 'shared', 'favicon.svg')),
    ...all.map(({ mount, folder, spaRoutes, baseHref, serviceRoutes }: WebPages) => {
      const directory = resolve(root, folder);
      if (!directory.startsWith(resolve(root) + sep)) throw new Error(`web folder ${folder} lies outside web/`);
      const serve = express.static(directory, {
        index: 'index.html',
        redirect: true,
        fallthrough: true,
        etag: true,
        lastModified: true,
        dotfiles: 'ignore',
        setHeaders: (response) => {
          for (const [name, value] of Object.entries(PAGE_HEADERS)) response.setHeader(name, value);
        },
      });
      const prefix = mount.replace(/\/+$/, '');
      const spa = spaRoutes ? singlePageIndex(directory, baseHref ?? `${prefix}/`) : null;
      const under = (path: string, routes: string[] | undefined) =>
        (routes ?? []).some((route) => path === route || path.startsWith(`${route}/`));
      const isSpaRoute = (path: string) => under(path, spaRoutes);
      return (request: Request, response: Response, next: NextFunction) => {
        if (request.method !== 'GET' && request.method !== 'HEAD') return next();
        const path = request.path;
        if (prefix !== '' && path !== prefix && !path.startsWith(`${prefix}/`)) return next();
        if (under(path.slice(prefix.length), serviceRoutes)) return next();
        const original = request.url;
        request.url = original.slice(prefix.length) || '/';
        if (spa && (request.path === '/' || request.path === '/index.html')) {
          request.url = original;
          return void spa(request, response).catch(next);
        }
        serve(request, response, (error?: unknown) => {
          const route = request.path;
          request.url = original;
          if (error || !spa || !isSpaRoute(route)) return next(error);
          spa(request, response).catch(next);
        });
      };
    }),
  ];
}

/**
 * Browsers ask every origin for `/favicon.ico`, whatever the page links: answer with the shared icon rather than a
 * 404 that each page would log as a console error.
 */
function sharedFavicon(file: string): RequestHandler {
  return (request, response, next) => {
    if (request.path !== '/favicon.ico' || (request.method !== 'GET' && request.method !== 'HEAD')) return next();
    if (!existsSync(file)) return next();
    response.set(PAGE_HEADERS).type('image/svg+xml');
    response.sendFile(file, (error?: Error) => {
      if (error && !response.headersSent) next(error);
    });
  };
}

const PAGE_HEADERS = { 'Cache-Control': 'no-cache', ...PAGE_SECURITY_HEADERS };

/** A single-page folder's `index.html` with `<base href>` written in, re-read when the file changes. */
function singlePageIndex(directory: string, baseHref: string) {
  if (!/^\/(?:[^"<>&\s]*\/)?$/.test(baseHref))
    throw new Error(`web page base ${baseHref} must be a path that starts and ends with "/"`);
  const file = join(directory, 'index.html');
  let cached: { modifiedMs: number; body: Buffer; etag: string } | null = null;
  return async (request: Request, response: Response) => {
    const { mtimeMs } = await stat(file);
    if (cached?.modifiedMs !== mtimeMs) {
      const html = (await readFile(file, 'utf8')).replace(/<head>/i, `<head>\n    <base href="${baseHref}" />`);
      const body = Buffer.from(html);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      cached = { modifiedMs: mtimeMs, body, etag };
    }
    response.set(PAGE_HEADERS).set('ETag', cached.etag).type('html');
    if (request.headers['if-none-match'] === cached.etag) return void response.status(304).end();
    response.status(200).end(request.method === 'HEAD' ? undefined : cached.body);
  };
}
