import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { PAGE_SECURITY_HEADERS, webPagesMiddleware, webRoot } from './web-assets.js';

describe('webPagesMiddleware', () => {
  const root = mkdtempSync(join(tmpdir(), 'tb-web-'));
  mkdirSync(join(root, 'shared'));
  mkdirSync(join(root, 'admin'));
  mkdirSync(join(root, 'browser'));
  writeFileSync(
    join(root, 'browser', 'index.html'),
    '<!doctype html><html><head><title>browser</title></head><body></body></html>',
  );
  writeFileSync(join(root, 'browser', 'app.js'), 'export {};');
  mkdirSync(join(root, 'browser', 'api'));
  writeFileSync(join(root, 'browser', 'api', 'data.json'), '{}');
  writeFileSync(join(root, 'browser', 'apix.js'), 'export {};');
  writeFileSync(join(root, 'shared', 'tb.css'), 'body{}');
  writeFileSync(join(root, 'shared', 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(root, 'admin', 'index.html'), '<!doctype html><title>admin</title>');
  let base = '';
  let close: () => void = () => undefined;

  beforeAll(async () => {
    const app = express();
    app.use(
      webPagesMiddleware(
        [
          { mount: '/admin', folder: 'admin' },
          { mount: '/', folder: 'browser', spaRoutes: ['/packages'], serviceRoutes: ['/api'] },
        ],
        root,
      ),
    );
    app.use((request, response) => void response.status(404).json({ fallthrough: request.path }));
    const server = app.listen(0);
    await new Promise((ready) => server.once('listening', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  it('serves a folder index with the page security headers and no-cache', async () => {
    const response = await fetch(`${base}/admin/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<title>admin</title>');
    expect(response.headers.get('content-security-policy')).toBe(PAGE_SECURITY_HEADERS['Content-Security-Policy']);
    expect(response.headers.get('cache-control')).toBe('no-cache');
  });

  it("passes the service's own routes on without looking for a file, and only those", async () => {
    for (const path of ['/api', '/api/data.json'])
      expect(await (await fetch(`${base}${path}`)).json()).toEqual({ fallthrough: path });
    const beside = await fetch(`${base}/apix.js`);
    expect(beside.status).toBe(200);
    expect(await beside.text()).toBe('export {};');
  });

  it('serves the shared assets under /_tb', async () => {
    const response = await fetch(`${base}/_tb/tb.css`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/css');
  });

  it('answers /favicon.ico with the shared icon, which browsers ask for whatever the page links', async () => {
    const response = await fetch(`${base}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await response.text()).toContain('<svg');
  });

  it('lets paths that are not files reach the service routes', async () => {
    const response = await fetch(`${base}/admin/api/users`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ fallthrough: '/admin/api/users' });
  });

  it('never serves a file outside the mounted folder', async () => {
    const response = await fetch(`${base}/admin/..%2fshared%2ftb.css`);
    expect(response.status).not.toBe(200);
  });

  it('answers a client-side route with the folder index and the page headers', async () => {
    const response = await fetch(`${base}/packages/some-package`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<title>browser</title>');
    expect(response.headers.get('content-security-policy')).toBe(PAGE_SECURITY_HEADERS['Content-Security-Policy']);
    expect(response.headers.get('cache-control')).toBe('no-cache');
  });

  it('answers the client-side route itself with the folder index', async () => {
    const response = await fetch(`${base}/packages`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('<title>browser</title>');
  });

  it('still serves real files beside the client-side routes', async () => {
    const response = await fetch(`${base}/app.js`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('export {};');
  });

  it('lets paths outside the client-side routes reach the service routes', async () => {
    for (const path of ['/api/v1/packages/some-package', '/packagesx', '/other/packages/x']) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ fallthrough: path });
    }
  });

  it('answers only reads with the folder index', async () => {
    const response = await fetch(`${base}/packages/some-package`, { method: 'POST' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ fallthrough: '/packages/some-package' });
  });

  it('writes the mount into the single-page index as its base, at the root and at a deep link', async () => {
    for (const path of ['/', '/packages/a/b']) {
      const response = await fetch(`${base}${path}`);
      expect(await response.text()).toContain('<head>\n    <base href="/" /><title>browser</title>');
    }
  });

  it('answers a repeated single-page request with 304 by its ETag', async () => {
    const first = await fetch(`${base}/packages/x`);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]{27}"$/);
    const second = await fetch(`${base}/`, { headers: { 'If-None-Match': etag! } });
    expect(second.status).toBe(304);
  });

  it('writes a proxy prefix as the base when one is given, and refuses a base that is not a path', async () => {
    const app = express();
    app.use(webPagesMiddleware([{ mount: '/', folder: 'browser', spaRoutes: ['/packages'], baseHref: '/tb/' }], root));
    const server = app.listen(0);
    await new Promise((ready) => server.once('listening', ready));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/packages/x`);
      expect(await response.text()).toContain('<base href="/tb/" />');
    } finally {
      server.close();
    }
    for (const baseHref of ['tb/', '/tb', '/t"b/', 'https://example.com/'])
      expect(() => webPagesMiddleware([{ mount: '/', folder: 'browser', spaRoutes: [], baseHref }], root)).toThrow(
        /must be a path/,
      );
  });

  it('finds the web folder of this package', () => {
    expect(webRoot()).toMatch(/web$/);
  });
});
