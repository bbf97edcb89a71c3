import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeHfHub } from '../../fixtures/fake-hf-hub.js';
import { backends } from '../../support/backends.js';
import {
  firstRenderMs,
  scriptAndStyleBytes,
  SCREENSHOT_DIR,
  startBrowser,
  type BrowserUnderTest,
  type TrackedPage,
} from '../../support/browser.js';
import type { Page } from 'playwright-core';
import { startGateway, type GatewayUnderTest } from '../../support/gateway-under-test.js';

/**
 * The gateway's landing page and admin page in a real headless Chromium, against the real gateway
 * with the fake Ollama. The page weight is asserted (the 150 KB budget); the first render is measured
 * and written to `test-artifacts/page-metrics-*.json` (timings are recorded here, never asserted).
 */
const GGUF = Buffer.concat([Buffer.from('GGUF'), randomBytes(4096)]);
const BUDGET_BYTES = 150 * 1024;
const metrics: Record<string, { scriptAndStyleBytes: number; firstRenderMs: number }> = {};

/** What the page functions below use of the browser (this project's TypeScript has no DOM library). */
interface PageGlobals {
  document: { getElementById(id: string): { value?: number; textContent: string | null } | null };
}

/** Form controls a screen reader could not name: no <label>, aria-label or aria-labelledby. */
async function unlabelledControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    interface Control {
      id: string;
      name: string;
      type: string;
      labels: { length: number } | null;
      getAttribute(name: string): string | null;
    }
    const { document } = globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<Control> } };
    return [...document.querySelectorAll('input, select, textarea')]
      .filter((control) => control.type !== 'hidden')
      .filter(
        (control) =>
          !control.labels?.length && !control.getAttribute('aria-label') && !control.getAttribute('aria-labelledby'),
      )
      .map((control) => control.id || control.name || control.type);
  });
}

/** Waits until an element matching the selector shows the text. */
async function shows(page: Page, selector: string, text: string | RegExp): Promise<void> {
  await page.locator(selector, { hasText: text }).first().waitFor();
}

/** Chromium reports every non-2xx fetch as a console error; a test that provokes one says which. */
const refused = (status: number) => new RegExp(`status of ${status}`);

describe.each(backends())('gateway landing and admin pages ($name)', (backend) => {
  let gateway: GatewayUnderTest;
  let browser: BrowserUnderTest;
  let hub: FakeHfHub;

  beforeAll(async () => {
    hub = new FakeHfHub({ 'acme/Tiny-GGUF': [{ path: 'tiny.Q4_K_M.gguf', content: GGUF }] });
    await hub.start();
    [gateway, browser] = await Promise.all([startGateway(backend, { env: { HF_BASE_URL: hub.url } }), startBrowser()]);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
    await hub?.stop();
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    writeFileSync(
      join(SCREENSHOT_DIR, '..', `page-metrics-${backend.name}.json`),
      `${JSON.stringify(metrics, null, 2)}\n`,
    );
  });

  async function measure(name: string, tracked: TrackedPage): Promise<void> {
    await tracked.page.waitForLoadState('networkidle');
    const bytes = scriptAndStyleBytes(tracked);
    const firstRender = await firstRenderMs(tracked.page);
    metrics[name] = { scriptAndStyleBytes: bytes, firstRenderMs: Math.round(firstRender) };
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(BUDGET_BYTES);
    expect(firstRender).toBeGreaterThan(0);
  }

  /** A fresh admin tab, signed in through the form. */
  async function signedIn(hash = ''): Promise<TrackedPage> {
    const tracked = await browser.newPage();
    await tracked.page.goto(`${gateway.baseUrl}/admin/${hash}`);
    await tracked.page.fill('#admin-key', gateway.adminKey);
    await tracked.page.click('#login-form button[type=submit]');
    await tracked.page.waitForSelector('#app [role=tab][aria-selected=true]');
    return tracked;
  }

  describe('landing page', () => {
    it('shows the status, the models with their capabilities and the pricing, without a console error', async () => {
      const tracked = await browser.newPage();
      const { page } = tracked;
      await page.goto(`${gateway.baseUrl}/`);
      await page.waitForSelector('#model-table');
      const llava = page.locator('#model-table tr', { hasText: 'llava:latest' });
      await expect(llava.textContent()).resolves.toMatch(/vision.*chat.*images/);
      await expect(page.locator('#model-table tr', { hasText: 'nomic-embed-text' }).textContent()).resolves.toMatch(
        /embedding.*text vectors/,
      );
      await page.waitForSelector('#tier-payg');
      expect(await page.textContent('#tier-payg')).toContain('5 chat requests a minute');
      expect(await page.textContent('#tier-payg')).toContain('0.0005 per 1,000 prompt tokens');
      expect(await page.textContent('#tier-sub')).toContain('10 chat requests a minute');
      await shows(page, '#status', 'Reachable');
      expect(await page.textContent('#status')).toContain('Up');
      expect(await unlabelledControls(page)).toEqual([]);
      await measure('landing', tracked);
      await tracked.screenshot('gateway-landing');
      expect(tracked.errors).toEqual([]);
    });

    it('fills the quick-start snippets with this gateway’s base URL and an installed chat model', async () => {
      const { page, errors } = await browser.newPage();
      await page.goto(`${gateway.baseUrl}/`);
      await page.waitForSelector('#model-table');
      const base = `${gateway.baseUrl}/v1`;
      expect(await page.textContent('#base-url')).toBe(base);
      await shows(page, '#snippet-curl', `curl ${base}/chat/completions`);
      expect(await page.textContent('#snippet-python')).toContain(`OpenAI(base_url="${base}", api_key="YOUR_KEY")`);
      expect(await page.textContent('#snippet-javascript')).toContain(`new OpenAI({ baseURL: '${base}'`);
      await page
        .locator('#snippet-python', { hasText: /model="(llama3\.2|llava|gemma3n)/ })
        .waitFor({ state: 'attached' });
      // The tabs answer the keyboard: right arrow from curl selects Python and shows its panel.
      await page.focus('#snippet-tab-curl');
      await page.keyboard.press('ArrowRight');
      expect(await page.getAttribute('#snippet-tab-python', 'aria-selected')).toBe('true');
      expect(await page.isVisible('#snippet-python')).toBe(true);
      expect(await page.isVisible('#snippet-curl')).toBe(false);
      expect(errors).toEqual([]);
    });

    it('fits a phone screen without sideways scrolling', async () => {
      const tracked = await browser.newPage({ viewport: { width: 375, height: 800 } });
      await tracked.page.goto(`${gateway.baseUrl}/`);
      await tracked.page.waitForSelector('#model-table');
      const overflow = await tracked.page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      await tracked.screenshot('gateway-landing-phone');
      expect(tracked.errors).toEqual([]);
    });

    it('sends a signup request, shows the answer, and the admin sees it pending', async () => {
      const { page, errors } = await browser.newPage();
      await page.goto(`${gateway.baseUrl}/`);
      await page.fill('#signup-email', 'grace@example.com');
      await page.fill('#signup-note', 'Compilers');
      await page.click('#signup-form button[type=submit]');
      await shows(page, '#signup-answer', 'Request pending');
      expect(await page.textContent('#signup-answer')).toContain('grace@example.com');
      const { body } = await gateway.call<{ signups: Array<{ email: string; note: string }> }>(
        'GET',
        '/admin/api/signups?status=pending',
      );
      expect(body.signups).toEqual([expect.objectContaining({ email: 'grace@example.com', note: 'Compilers' })]);
      expect(errors).toEqual([]);
    });

    it('shows the gateway’s refusal of a second request for the same address', async () => {
      const { page, errors } = await browser.newPage();
      await page.goto(`${gateway.baseUrl}/`);
      await page.fill('#signup-email', 'grace@example.com');
      await page.click('#signup-form button[type=submit]');
      await shows(page, '#signup-answer', 'already pending');
      expect(errors).toEqual([expect.stringMatching(refused(409))]);
    });
  });

  describe('admin page', () => {
    it('refuses a wrong key, then signs in and shows the dashboard', async () => {
      const tracked = await browser.newPage();
      const { page } = tracked;
      await page.goto(`${gateway.baseUrl}/admin/`);
      await page.fill('#admin-key', 'sk-tb-not-the-admin-key-000000000000');
      await page.click('#login-form button[type=submit]');
      await shows(page, '#login-error', 'not the admin key');
      expect(await page.evaluate('sessionStorage.getItem("tb-key:admin")')).toBeNull();
      await page.fill('#admin-key', gateway.adminKey);
      await page.click('#login-form button[type=submit]');
      await page.waitForSelector('#dashboard-stats');
      expect(await page.textContent('#dashboard-stats')).toMatch(/Reachable[\s\S]*\/ min[\s\S]*cores/);
      expect(await page.evaluate('sessionStorage.getItem("tb-key:admin")')).toBe(gateway.adminKey);
      // The key lives in this tab's session storage: a reload stays signed in.
      await page.reload();
      await page.waitForSelector('#dashboard-stats');
      await measure('admin', tracked);
      await tracked.screenshot('gateway-admin-dashboard');
      expect(tracked.errors).toEqual([expect.stringMatching(refused(401))]);
    });

    it('creates a user, tops up, issues a key shown once, and a reload no longer shows it', async () => {
      const tracked = await signedIn();
      const { page } = tracked;
      await page.click('#admin-tab-users');
      await page.fill('#new-email', 'ada@example.com');
      await page.selectOption('#new-tier', 'payg');
      await page.click('#create-user-form button[type=submit]');
      await shows(page, '#user-detail-title', /^ada@example\.com$/);
      await shows(page, '#users-table', 'ada@example.com');

      await page.fill('#topup-amount', '5');
      await page.click('#topup-form button[type=submit]');
      await shows(page, '#user-balance', /^5\.00$/);

      await page.fill('#key-name', 'laptop');
      await page.click('#issue-key-form button[type=submit]');
      const key = (await page.locator('.new-key').textContent())!;
      expect(key).toMatch(/^sk-tb-[0-9a-f]{48}$/);
      const me = await gateway.call<{ email: string; balance: number }>('GET', '/user/api/me', undefined, key);
      expect(me.body).toMatchObject({ email: 'ada@example.com', balance: 5 });
      expect(await unlabelledControls(page)).toEqual([]);
      await tracked.screenshot('gateway-admin-users');

      await page.reload();
      await page.waitForSelector('#users-table');
      await page.locator('#users-table tr', { hasText: 'ada@example.com' }).getByRole('button').click();
      await shows(page, '#keys-table', key.slice(0, 14));
      expect(await page.locator('.new-key').count()).toBe(0);
      expect(await page.content()).not.toContain(key);

      await page.getByRole('combobox', { name: 'Tier of ada@example.com' }).selectOption('sub');
      await shows(page, '#toast', 'ada@example.com is now sub');
      const users = await gateway.call<{ users: Array<{ email: string; tier: string }> }>('GET', '/admin/api/users');
      expect(users.body.users.find((user) => user.email === 'ada@example.com')?.tier).toBe('sub');
      expect(tracked.errors).toEqual([]);
    });

    it('shows a user’s usage and revokes a key', async () => {
      const created = await gateway.call<{ id: string }>('POST', '/admin/api/users', {
        email: 'lin@example.com',
        tier: 'sub',
      });
      const issued = await gateway.call<{ key: string }>('POST', `/admin/api/users/${created.body.id}/keys`, {});
      await gateway
        .openai(issued.body.key)
        .chat.completions.create({ model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] });
      const tracked = await signedIn('#users');
      const { page } = tracked;
      await page.click('#admin-tab-users');
      await page.locator('#users-table tr', { hasText: 'lin@example.com' }).getByRole('button').click();
      await shows(page, '#user-usage', '1 request ·');
      expect(await page.textContent('#user-detail')).not.toMatch(/false|undefined|NaN/);
      expect(await page.textContent('#usage-table')).toMatch(/llama3\.2(:latest)?1/);
      await page.locator('#keys-table').getByRole('button', { name: 'Revoke' }).click();
      await shows(page, '#keys-table', 'revoked');
      const after = await gateway.call('GET', '/user/api/me', undefined, issued.body.key);
      expect(after.status).toBe(401);
      expect(tracked.errors).toEqual([]);
    });

    it('loads a model, and pulls one with a progress bar that moves to done', async () => {
      const tracked = await signedIn();
      const { page } = tracked;
      await page.click('#admin-tab-models');
      const row = page.locator('#models-table tr[data-model="llava:latest"]');
      await row.getByRole('button', { name: 'Load' }).click();
      await row.locator('.model-state', { hasText: /^loaded/ }).waitFor();
      expect(await row.locator('.model-state').textContent()).not.toContain('not loaded');
      expect(gateway.ollama.requests.some((request) => request.path === '/api/generate')).toBe(true);

      // The pull waits at the runtime's half-way record until the page has shown it.
      let release = gateway.ollama.holdPullAt((record) => record.completed === 500);
      try {
        await page.fill('#pull-name', 'qwen3:0.6b');
        await page.click('#pull-form button[type=submit]');
        await page.waitForFunction(() => {
          const { document } = globalThis as unknown as PageGlobals;
          const bar = document.getElementById('pull-bar');
          const status = document.getElementById('pull-status');
          return bar?.value === 50 && /pulling [0-9a-f]{12} \(500 B of 1\.0 KB\)/.test(status?.textContent ?? '');
        });
      } finally {
        release();
      }
      await shows(page, '#pull-status', 'Done: qwen3:0.6b is installed');
      expect(await page.evaluate<number>(`document.getElementById('pull-bar').value`)).toBe(100);
      await page.waitForSelector('#models-table tr[data-model="qwen3:0.6b"]');

      // Two layers pulled side by side: the bar counts the bytes of both (2,500 of 4,000 bytes is 62 %),
      // not the 100 % of the small layer that reported last.
      release = gateway.ollama.holdPullAt((record) => record.total === 1000 && record.completed === 1000);
      try {
        await page.fill('#pull-name', 'layered-model');
        await page.click('#pull-form button[type=submit]');
        await page.waitForFunction(() => {
          const { document } = globalThis as unknown as PageGlobals;
          const status = document.getElementById('pull-status')?.textContent ?? '';
          return document.getElementById('pull-bar')?.value === 62 && status.includes('(1.0 KB of 1.0 KB)');
        });
      } finally {
        release();
      }
      await shows(page, '#pull-status', 'Done: layered-model is installed');
      expect(await unlabelledControls(page)).toEqual([]);
      await tracked.screenshot('gateway-admin-models');

      await row.getByRole('button', { name: 'Unload' }).click();
      await row.locator('.model-state', { hasText: 'not loaded' }).waitFor();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('#models-table tr[data-model="qwen3:0.6b"]').getByRole('button', { name: 'Delete' }).click();
      await page.locator('#models-table tr[data-model="qwen3:0.6b"]').waitFor({ state: 'detached' });
      const { body } = await gateway.call<{ models: Array<{ name: string; loaded: boolean }> }>(
        'GET',
        '/admin/api/models',
      );
      expect(body.models.map((model) => model.name)).not.toContain('qwen3:0.6b');
      expect(body.models.find((model) => model.name === 'llava:latest')?.loaded).toBe(false);
      expect(tracked.errors).toEqual([]);
    });

    it('searches the model hub and downloads a GGUF file with progress into the runtime', async () => {
      const tracked = await signedIn('#models');
      const { page } = tracked;
      await page.fill('#hub-query', 'tiny');
      await page.click('#hub-form button[type=submit]');
      await page
        .locator('#hub-results tr', { hasText: 'acme/Tiny-GGUF' })
        .getByRole('button', { name: 'Files' })
        .click();
      await shows(page, '#hub-files', 'tiny.Q4_K_M.gguf');
      await page.fill('#hub-files input', 'tiny-hub:q4');
      await page.locator('#hub-files').getByRole('button', { name: 'Download' }).click();
      await shows(page, '#hub-0-status', 'Done: downloaded, verified and imported');
      await page.waitForSelector('#models-table tr[data-model="tiny-hub:q4"]');
      expect(await unlabelledControls(page)).toEqual([]);
      await tracked.screenshot('gateway-admin-hub');
      expect(tracked.errors).toEqual([]);
    });

    it('imports an uploaded GGUF file', async () => {
      const tracked = await signedIn('#models');
      const { page } = tracked;
      await page.setInputFiles('#import-file', {
        name: 'upload.Q4_0.gguf',
        mimeType: 'application/octet-stream',
        buffer: GGUF,
      });
      await page.fill('#import-name', 'uploaded:q4');
      await page.click('#import-form button[type=submit]');
      await shows(page, '#import-status', 'Done: the model was created');
      await page.waitForSelector('#models-table tr[data-model="uploaded:q4"]');
      expect(tracked.errors).toEqual([]);
    });

    it('approves a signup, showing the tier it asks for, and shows the new user’s key once', async () => {
      await gateway.call('POST', '/api/signup', { email: 'hedy@example.com', tier: 'sub' }, '');
      const tracked = await signedIn('#signups');
      const { page } = tracked;
      const row = page.locator('#signups-table tr', { hasText: 'hedy@example.com' });
      expect(await row.textContent()).toContain('asks for sub');
      await row.getByRole('combobox').selectOption('sub');
      await row.getByRole('button', { name: 'Approve' }).click();
      const key = (await page.locator('#approved .new-key').textContent())!;
      expect(key).toMatch(/^sk-tb-[0-9a-f]{48}$/);
      const me = await gateway.call<{ email: string; tier: string }>('GET', '/user/api/me', undefined, key);
      expect(me.body).toMatchObject({ email: 'hedy@example.com', tier: 'sub' });
      await page.locator('#signups-table tr', { hasText: 'hedy@example.com' }).waitFor({ state: 'detached' });
      expect(await unlabelledControls(page)).toEqual([]);
      await tracked.screenshot('gateway-admin-signups');
      expect(tracked.errors).toEqual([]);
    });

    it('rejects a signup', async () => {
      await gateway.call('POST', '/api/signup', { email: 'mallory@example.com' }, '');
      const tracked = await signedIn('#signups');
      const { page } = tracked;
      await page
        .locator('#signups-table tr', { hasText: 'mallory@example.com' })
        .getByRole('button', { name: 'Reject' })
        .click();
      await page.locator('#signups-table tr', { hasText: 'mallory@example.com' }).waitFor({ state: 'detached' });
      await page.selectOption('#signup-status', 'rejected');
      await shows(page, '#signups-table', 'mallory@example.com');
      expect(await page.locator('#approved .new-key').count()).toBe(0);
      expect(tracked.errors).toEqual([]);
    });

    it('shows the configuration’s validation errors at their fields and saves a valid change', async () => {
      const tracked = await signedIn('#config');
      const { page } = tracked;
      await page.waitForSelector('#config-rate_limits-payg');
      expect(await page.inputValue('#config-rate_limits-payg')).toBe('5');
      await page.fill('#config-rate_limits-payg', '0');
      await page.fill('#config-ollama_url', 'not a url');
      await page.click('#config-form button[type=submit]');
      await shows(page, '#config-rate_limits-payg-error', 'rate_limits.payg must be a whole number of at least 1');
      expect(await page.textContent('#config-ollama_url-error')).toContain('ollama_url must be an http(s) URL');
      expect(await page.getAttribute('#config-rate_limits-payg', 'aria-invalid')).toBe('true');
      expect(await page.textContent('#config-summary')).toContain('2 problem(s)');
      expect(await unlabelledControls(page)).toEqual([]);
      await tracked.screenshot('gateway-admin-config-errors');
      const unchanged = await gateway.call<{ rate_limits: { payg: number }; ollama_url: string }>(
        'GET',
        '/admin/api/config',
      );
      expect(unchanged.body.rate_limits.payg).toBe(5);

      await page.fill('#config-rate_limits-payg', '7');
      await page.fill('#config-ollama_url', unchanged.body.ollama_url);
      await page.click('#config-form button[type=submit]');
      await shows(page, '#config-summary', 'Saved.');
      expect(await page.locator('.field-error').count()).toBe(0);
      const saved = await gateway.call<{ rate_limits: { payg: number; sub: number } }>('GET', '/admin/api/config');
      expect(saved.body.rate_limits).toEqual({ payg: 7, sub: 10 });

      // A JSON field that does not parse is reported at once, without a request (no second 400 below).
      await page.fill('#config-model_types', '{"broken": ');
      await page.click('#config-form button[type=submit]');
      await shows(page, '#config-model_types-error', 'model_types is not valid JSON');
      expect(await page.getAttribute('#config-model_types', 'aria-invalid')).toBe('true');
      expect(tracked.errors).toEqual([expect.stringMatching(refused(400))]);
    });

    it('fits a phone screen, every tab, without sideways scrolling', async () => {
      const tracked = await browser.newPage({ viewport: { width: 375, height: 800 } });
      const { page } = tracked;
      await page.goto(`${gateway.baseUrl}/admin/`);
      await page.fill('#admin-key', gateway.adminKey);
      await page.click('#login-form button[type=submit]');
      for (const [tab, ready] of [
        ['dashboard', '#dashboard-stats'],
        ['models', '#models-table'],
        ['users', '#users-list > *'],
        ['signups', '#signups-list > *'],
        ['config', '#config-form button'],
      ]) {
        await page.click(`#admin-tab-${tab}`);
        // Seen once under a loaded CI run: the models tab never showed its table. Say what the tab showed.
        await page.waitForSelector(ready).catch(async (error: unknown) => {
          const shot = await tracked.screenshot(`gateway-admin-phone-${tab}-missing`);
          const shown = await page.innerText('body');
          throw new Error(`the ${tab} tab has no ${ready} (screenshot ${shot}); it shows: ${shown.slice(0, 2000)}`, {
            cause: error,
          });
        });
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
        expect({ tab, overflow: Math.max(0, overflow) }).toEqual({ tab, overflow: 0 });
      }
      await page.click('#admin-tab-users');
      await tracked.screenshot('gateway-admin-users-phone');
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.click('#admin-tab-models');
      await page.waitForSelector('#models-table');
      await tracked.screenshot('gateway-admin-models-phone-dark');
      expect(tracked.errors).toEqual([]);
    });

    it('signs out when the stored key is refused', async () => {
      const { page, errors } = await browser.newPage();
      await page.goto(`${gateway.baseUrl}/admin/`);
      await page.evaluate('sessionStorage.setItem("tb-key:admin", "sk-tb-stale-key-00000000000000000000")');
      await page.reload();
      await shows(page, '#login-error', 'refused');
      expect(await page.evaluate('sessionStorage.getItem("tb-key:admin")')).toBeNull();
      expect(errors.every((error) => refused(401).test(error))).toBe(true);
    });
  });
});
