import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { webPagesMiddleware } from '../../../src/common/web-assets.js';
import { firstRenderMs, scriptAndStyleBytes, startBrowser, type BrowserUnderTest } from '../../support/browser.js';

// The shared page layer in a real Chromium: the CSP lets the shared module load, and the harness sees console errors.
describe('shared web assets in Chromium', () => {
  let browser: BrowserUnderTest;
  let server: Server;
  let base = '';

  beforeAll(async () => {
    const app = express();
    app.use(webPagesMiddleware([]));
    app.get('/page', (_request, response) => {
      response.type('html').send(
        `<!doctype html><html lang="en"><head><title>t</title><link rel="stylesheet" href="/_tb/tb.css"><link rel="icon" href="/_tb/favicon.svg">
         <script type="module">import { h, render } from '/_tb/tb.js'; render(document.body, h('p', { id: 'ok' }, 'built'));</script>
         </head><body></body></html>`,
      );
    });
    server = createServer(app).listen(0);
    await new Promise((ready) => server.once('listening', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await startBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  it('loads the shared stylesheet and module and builds DOM with them', async () => {
    const tracked = await browser.newPage();
    await tracked.page.goto(`${base}/page`);
    await tracked.page.waitForSelector('#ok');
    expect(await tracked.page.textContent('#ok')).toBe('built');
    expect(tracked.errors).toEqual([]);
    expect(scriptAndStyleBytes(tracked)).toBeGreaterThan(1000);
    expect(await firstRenderMs(tracked.page)).toBeGreaterThan(0);
  });

  it('records a console error raised by a page', async () => {
    const tracked = await browser.newPage();
    await tracked.page.goto(`${base}/_tb/tb.css`);
    await tracked.page.evaluate(() => console.error('boom'));
    expect(tracked.errors).toEqual([expect.stringMatching(/^console: boom/)]);
  });
});
