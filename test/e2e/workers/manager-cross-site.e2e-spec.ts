import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { backends } from '../../support/backends.js';
import { startBrowser, type BrowserUnderTest } from '../../support/browser.js';
import type { ManagerUnderTest } from '../../support/manager-under-test.js';
import { startManagerBehindNginx, type NginxUnderTest } from '../../support/nginx-under-test.js';

interface Worker {
  worker_id: string;
  type: string;
  pid: number | null;
  state: string;
}

const PASSWORD = 'cross site horse battery';
const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/** The admin API's state-changing routes (method, path after /api/). */
const STATE_CHANGING: [string, string][] = [
  ['POST', 'scale'],
  ['POST', 'rolling-update'],
  ['POST', 'restart'],
  ['POST', 'workers/start'],
  ['POST', 'workers/stop'],
  ['POST', 'workers/restart'],
  ['POST', 'nginx/reload'],
  ['POST', 'cluster/join'],
  ['DELETE', 'cluster/nodes/127.0.0.1:9'],
  ['POST', 'shutdown'],
];

/**
 * A page of another site (served on `localhost`, while the admin UI is on 127.0.0.1) that sends what it is told on
 * load: `/form?action=URL&enctype=T` submits a form, `/fetch?action=URL` a no-cors fetch with credentials.
 */
function attackerSite(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://attacker');
    const action = JSON.stringify(url.searchParams.get('action') ?? '');
    const page =
      url.pathname === '/form'
        ? `<form method="post" action=${action} enctype="${url.searchParams.get('enctype') ?? 'text/plain'}">` +
          `<input name='{"type":"http","count":"' value='1"}'></form><script>document.forms[0].submit()</script>`
        : `<script>fetch(${action}, {method: 'POST', mode: 'no-cors', credentials: 'include', body: '{}'})</script>`;
    response.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>win a prize</title>${page}`);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://localhost:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

// The attack: an administrator signed in to /admin/manager/ (the browser keeps the Basic-auth credentials) opens a
// page of another site, which posts to the admin API; nginx adds the manager secret to whatever passes basic auth.
describe.each(backends())('worker manager against cross-site requests on $name', (backend) => {
  let nginx: NginxUnderTest;
  let manager: ManagerUnderTest;
  let browser: BrowserUnderTest;
  let attacker: { server: Server; url: string };
  let dispose: () => Promise<void>;
  const contexts: BrowserContext[] = [];

  const admin = (path: string) => `${nginx.url}/admin/manager/api/${path}`;
  const workerPids = async () =>
    (await manager.json<Worker[]>('/api/workers'))
      .filter((worker) => worker.state === 'running')
      .map((worker) => worker.pid)
      .sort();
  /** A tab of a browser that holds the admin UI's Basic-auth credentials, as after signing in. */
  const signedInTab = async () => {
    const context = await browser.browser.newContext({
      httpCredentials: { username: 'admin', password: PASSWORD, origin: nginx.url },
    });
    contexts.push(context);
    return context.newPage();
  };
  /** A request through nginx with the password, as a browser or a script sends it. */
  const throughNginx = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    fetch(admin(path), { method, headers: { authorization: basic, ...headers }, body });
  /** A request straight to the manager with its secret and exactly these headers. */
  const direct = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    fetch(`${manager.api}/api/${path}`, { method, headers: { 'x-cluster-secret': manager.secret, ...headers }, body });

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    ({ nginx, manager } = await startManagerBehindNginx({ env: { ADMIN_UI_PASSWORD: PASSWORD, ...provisioned.env } }));
    browser = await startBrowser();
    attacker = await attackerSite();
  }, 180_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await new Promise((resolve) => attacker?.server.close(resolve));
    await manager?.stop();
    await nginx?.stop();
    await dispose?.();
  });

  describe('in a real browser, through the generated nginx site', () => {
    it('refuses a cross-site form that would restart every worker with 403, and nothing restarts', async () => {
      const pids = await workerPids();
      const tab = await signedInTab();
      const answer = tab.waitForResponse((response) => response.url() === admin('restart'));
      await tab.goto(`${attacker.url}/form?action=${encodeURIComponent(admin('restart'))}`);
      const response = await answer;
      expect(response.status()).toBe(403);
      expect(await response.json()).toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringContaining('Cross-site'),
      });
      expect(await workerPids()).toEqual(pids);
    });

    it('refuses a cross-site no-cors fetch that would shut the manager down with 403; the manager still runs', async () => {
      const tab = await signedInTab();
      const answer = tab.waitForResponse((response) => response.url() === admin('shutdown'));
      await tab.goto(`${attacker.url}/fetch?action=${encodeURIComponent(admin('shutdown'))}`);
      expect((await answer).status()).toBe(403);
      expect((await manager.request('/api/health')).status).toBe(200);
    });

    it("lets the admin UI's own page change state (same origin)", async () => {
      const tab = await signedInTab();
      await tab.goto(`${nginx.url}/admin/manager/api/health`);
      const answer = await tab.evaluate(async () => {
        const workers = (await (await fetch('workers')).json()) as { type: string; state: string }[];
        const count = workers.filter((worker) => worker.type === 'http' && worker.state === 'running').length;
        const response = await fetch('scale', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'http', count }),
        });
        return { status: response.status, body: (await response.json()) as { status: string } };
      });
      expect(answer).toMatchObject({ status: 200, body: { status: 'ok' } });
    });
  });

  describe('through the generated nginx site, from any client', () => {
    it('refuses a state change whose Origin names another host, without Sec-Fetch-Site (an older browser)', async () => {
      const response = await throughNginx('POST', 'restart', {
        origin: 'https://evil.example',
        'content-type': 'application/json',
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'FORBIDDEN' });
    });

    it('refuses a state change from Origin null (a sandboxed iframe)', async () => {
      const response = await throughNginx('POST', 'restart', { origin: 'null', 'content-type': 'application/json' });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'FORBIDDEN' });
    });

    it('refuses a same-site page of another origin (Sec-Fetch-Site: same-site)', async () => {
      const response = await throughNginx('POST', 'restart', {
        origin: `http://127.0.0.1:${nginx.port}`,
        'sec-fetch-site': 'same-site',
        'content-type': 'application/json',
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ code: 'FORBIDDEN' });
    });

    it('still answers a cross-site GET (a link to the dashboard), without CORS headers', async () => {
      const response = await throughNginx('GET', 'status', {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('passes a script that sends no Origin (curl with the password) and a JSON body', async () => {
      const count = (await manager.json<Worker[]>('/api/workers')).filter(
        (worker) => worker.type === 'http' && worker.state === 'running',
      ).length;
      const response = await throughNginx(
        'POST',
        'scale',
        { 'content-type': 'application/json' },
        JSON.stringify({ type: 'http', count }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: 'ok', started: [], stopped: [] });
    });

    it('refuses at the manager, with 415, a form post that reached it without an Origin', async () => {
      const response = await throughNginx(
        'POST',
        'scale',
        { 'content-type': 'application/x-www-form-urlencoded' },
        'type=http&count=1',
      );
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    });
  });

  describe('straight at the manager, with its secret', () => {
    it.each(STATE_CHANGING)('refuses a text/plain %s %s with 415 (a form could send it)', async (method, path) => {
      const response = await direct(method, path, { 'content-type': 'text/plain' }, '{"type":"http","count":1}');
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: expect.stringContaining('application/json'),
      });
    });

    it('refuses a form-encoded POST with 415', async () => {
      const response = await direct(
        'POST',
        'workers/start',
        { 'content-type': 'application/x-www-form-urlencoded' },
        'type=http',
      );
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    });

    it('refuses a POST without body type or X-Requested-With with 415', async () => {
      const response = await direct('POST', 'rolling-update', {});
      expect(response.status).toBe(415);
      expect(await response.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
    });

    it('accepts a body-less POST that carries X-Requested-With', async () => {
      const response = await direct('POST', 'nginx/reload', { 'x-requested-with': 'curl' });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: expect.stringMatching(/^(ok|error)$/) });
    });

    it('documents the 415 on every state-changing route and on no read', async () => {
      const document = (await (await direct('GET', 'docs-json', {})).json()) as {
        paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      };
      const paths = document.paths;
      for (const [method, path] of STATE_CHANGING) {
        const documented = path.startsWith('cluster/nodes/') ? '/api/cluster/nodes/{id}' : `/api/${path}`;
        expect([method, path, paths[documented][method.toLowerCase()].responses['415']]).toEqual([
          method,
          path,
          expect.objectContaining({ description: expect.stringContaining('X-Requested-With') }),
        ]);
      }
      expect(paths['/api/status'].get.responses['415']).toBeUndefined();
    });

    it('answers reads without either (GET changes nothing)', async () => {
      const response = await direct('GET', 'status', {});
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ running: true });
    });
  });
});
