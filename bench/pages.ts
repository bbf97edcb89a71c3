/**
 * The gateway's pages in Debian's Chromium: first contentful paint, time until the page shows its data,
 * and the JS + CSS each page transfers (the budget: under 1 s and 150 KB on this machine).
 *
 *   npm run build && node dist/bench/pages.js [--loads N] [--paths /,/admin/,/user/,/playground/,/live]
 *
 * One gateway on SQLite with the fake Ollama, in this process; each load is a fresh browser context (empty
 * cache), so every figure is a cold load. The admin key and a user's key are put in the tab's session storage
 * first, so `/admin/` and the user's pages measure what they show after sign-in, not the sign-in form.
 */
import 'reflect-metadata';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHttpApp } from '../src/apps/create-http-app.js';
import { GatewayAppModule, gatewayHttpAppOptions } from '../src/apps/gateway.app-module.js';
import { loadConfig } from '../src/config/config.js';
import { defaultSettings } from '../src/modules/gateway/gateway-settings.js';
import { FakeOllama } from '../test/fixtures/fake-ollama.js';
import { firstRenderMs, scriptAndStyleBytes, startBrowser } from '../test/support/browser.js';
import { percentile } from './support/stats.js';

const { values } = parseArgs({
  options: {
    loads: { type: 'string', default: '10' },
    paths: { type: 'string', default: '/,/admin/,/user/,/playground/,/live' },
  },
});
const LOADS = Number(values.loads);
const PATHS = values.paths.split(',').filter(Boolean);

/** The element that means "the page shows its data" (pages not listed: the load event). */
const READY: Record<string, string> = {
  '/': '#model-table',
  '/admin/': '#dashboard-stats',
  '/user/': 'svg.chart',
  '/playground/': '#prompt',
  '/live': '#start',
};

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tb-bench-pages-'));
  const ollama = new FakeOllama();
  const settings = defaultSettings();
  await mkdir(join(dataDir, 'gateway'), { recursive: true });
  await writeFile(join(dataDir, 'gateway', 'config.json'), JSON.stringify(settings));
  const config = loadConfig(
    { DATA_DIR: dataDir, OLLAMA_URL: await ollama.start(), GATEWAY_PORT: '0' },
    { services: ['gateway'] },
  );
  const app = await createHttpApp(GatewayAppModule.forRoot(config), {
    ...gatewayHttpAppOptions(config),
    logger: ['error'],
  });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  const userKey = await issueUserKey(base, settings.admin_key);
  const browser = await startBrowser();
  const rows: string[][] = [];
  try {
    for (const path of PATHS) {
      const paints: number[] = [];
      const ready: number[] = [];
      let bytes = 0;
      for (let load = 0; load < LOADS; load += 1) {
        const tracked = await browser.newPage();
        await tracked.context.addInitScript(
          (keys) => {
            const storage = (
              globalThis as unknown as { sessionStorage: { setItem(name: string, value: string): void } }
            ).sessionStorage;
            storage.setItem('tb-key:admin', keys.admin);
            storage.setItem('tb-key:user', keys.user);
          },
          { admin: settings.admin_key, user: userKey },
        );
        const started = performance.now();
        await tracked.page.goto(`${base}${path}`, { waitUntil: 'load' });
        if (READY[path]) await tracked.page.waitForSelector(READY[path]);
        ready.push(performance.now() - started);
        await tracked.page.waitForLoadState('networkidle');
        paints.push(await firstRenderMs(tracked.page));
        bytes = scriptAndStyleBytes(tracked);
        if (tracked.errors.length > 0) throw new Error(`${path}: ${tracked.errors.join('; ')}`);
        await tracked.context.close();
      }
      paints.sort((a, b) => a - b);
      ready.sort((a, b) => a - b);
      rows.push([
        path,
        percentile(paints, 0.5).toFixed(0),
        percentile(paints, 0.95).toFixed(0),
        percentile(ready, 0.5).toFixed(0),
        percentile(ready, 0.95).toFixed(0),
        (bytes / 1024).toFixed(1),
      ]);
    }
  } finally {
    await browser.close();
    await app.close();
    await ollama.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(`Gateway pages, ${LOADS} cold loads each (fresh context), Chromium headless`);
  console.log('| Page | first paint p50 ms | p95 ms | data shown p50 ms | p95 ms | JS + CSS KB |');
  console.log('|---|---|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}

/** A user with a key, made through the admin API as a person would. */
async function issueUserKey(base: string, adminKey: string): Promise<string> {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, string>;
  };
  const user = await call('/admin/api/users', { email: 'bench@example.com' });
  return (await call(`/admin/api/users/${user.id}/keys`, {})).key;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
