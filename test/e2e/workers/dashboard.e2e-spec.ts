import type { Page } from 'playwright-core';
import { backends } from '../../support/backends.js';
import {
  firstRenderMs,
  scriptAndStyleBytes,
  startBrowser,
  type BrowserUnderTest,
  type TrackedPage,
} from '../../support/browser.js';
import { eventually } from '../../support/eventually.js';
import { startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';
import { startManagerBehindNginx, type NginxUnderTest } from '../../support/nginx-under-test.js';

interface Worker {
  worker_id: string;
  type: string;
  pid: number | null;
  state: string;
  restart_count: number;
}

/** Page weight budget of the dashboard (JS + CSS as transferred, headers included). */
const PAGE_BUDGET_BYTES = 150_000;

/** The browser logs every non-2xx fetch as a console error: the page's designed 401 (secret needed) is one. */
const expectedFailure = (status: number) =>
  new RegExp(`^console: Failed to load resource: the server responded with a status of ${status} .*/api/`);

// The manager's dashboard in a real Chromium against a real manager with real worker processes.
describe.each(backends())('worker manager dashboard on $name', (backend) => {
  let manager: ManagerUnderTest;
  let browser: BrowserUnderTest;
  let dispose: () => Promise<void>;
  let tracked: TrackedPage;
  let page: Page;

  const workers = () => manager.json<Worker[]>('/api/workers');
  const liveHttp = async () => (await workers()).filter((w) => w.type === 'http' && w.state !== 'stopped');
  const row = (id: string) => page.locator(`#workers tbody tr[data-worker-id="${id}"]`);
  const rowCount = () => page.locator('#workers tbody tr[data-worker-id]').count();

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    manager = await startManager({ httpWorkers: 2, httpSlots: 4, env: provisioned.env });
    browser = await startBrowser();
    tracked = await browser.newPage();
    page = tracked.page;
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await manager?.stop();
    await dispose?.();
  });

  it('prints the dashboard URL and where its secret lives, never the secret', async () => {
    const line = await manager.process.line((text) => text.startsWith('Dashboard: '));
    expect(line).toBe(
      `Dashboard: ${manager.api}/ (opened directly it asks for the manager secret: the file ${manager.env.DATA_DIR}/manager-secret)`,
    );
    expect(manager.process.stdout()).not.toContain(manager.secret);
  });

  it('asks for the secret on direct access (a wrong one again), then shows every worker; no other console error', async () => {
    await page.goto(`${manager.api}/`);
    const secretInput = page.getByRole('textbox', { name: 'Manager secret' });
    await secretInput.waitFor();
    expect(await page.locator('#dashboard').isHidden()).toBe(true);
    // Keyboard only: the field has focus once the page asked for it, Enter submits.
    await page.keyboard.type(`${manager.secret}x`);
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText('That secret is wrong').waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await page.keyboard.type(manager.secret);
    await page.keyboard.press('Enter');
    await page.locator('#workers tbody tr[data-worker-id]').first().waitFor();
    const ids = (await workers()).map((w) => w.worker_id);
    expect(ids).toHaveLength(3);
    await eventually(rowCount, (count) => count === 3, 5000);
    for (const id of ids) await row(id).waitFor();
    expect(await row(ids[0]).getAttribute('data-state')).toBe('running');
    expect(await page.locator('#secret-panel').isHidden()).toBe(true);
    // The request sent before the secret was known answered 401, the wrong secret's 403; nothing else failed.
    expect(tracked.errors).toEqual([
      expect.stringMatching(expectedFailure(401)),
      expect.stringMatching(expectedFailure(403)),
    ]);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(1);
  });

  it('shows totals and the nginx, broker and cluster status', async () => {
    const totals = await page.locator('#totals').textContent();
    expect(totals).toContain('Live workers');
    expect(totals).toContain('2 HTTP · 1 WS');
    const system = await page.locator('#system').textContent();
    expect(system).toContain('Not installed');
    expect(system).toContain('Single node');
    expect(system).toMatch(/driver (ipc|redis|local)/);
    expect(await page.locator('#reload-nginx').isDisabled()).toBe(true);
  });

  it('keeps JS + CSS under the page-weight budget and records the first render', async () => {
    const bytes = scriptAndStyleBytes(tracked);
    const firstRender = await firstRenderMs(page);
    // Timing on a shared 2-core machine is recorded, not asserted (the byte budget is deterministic).
    process.stdout.write(`dashboard: ${bytes} bytes of JS + CSS, first render ${firstRender.toFixed(0)} ms\n`);
    expect(bytes).toBeGreaterThan(5_000);
    expect(bytes).toBeLessThan(PAGE_BUDGET_BYTES);
    expect(firstRender).toBeGreaterThan(0);
  });

  it('"+ HTTP" adds a worker: one more row, and the API confirms it', async () => {
    const before = await liveHttp();
    await page.getByRole('button', { name: '+ HTTP' }).click();
    const after = await eventually(liveHttp, (now) => now.length === before.length + 1, 20_000);
    expect(after).toHaveLength(before.length + 1);
    const added = after.find((w) => !before.some((old) => old.worker_id === w.worker_id))!;
    await row(added.worker_id).waitFor({ timeout: 10_000 });
    expect(await eventually(rowCount, (count) => count === 4, 10_000)).toBe(4);
    await page.locator('#toast').getByText(`Started ${added.worker_id}`).waitFor();
  });

  it('stops a worker from its row and starts it again', async () => {
    const [target] = await liveHttp();
    await row(target.worker_id)
      .getByRole('button', { name: `Stop ${target.worker_id}`, exact: true })
      .click();
    await page.locator(`#workers tr[data-worker-id="${target.worker_id}"][data-state="stopped"]`).waitFor({
      timeout: 20_000,
    });
    expect((await workers()).find((w) => w.worker_id === target.worker_id)!.state).toBe('stopped');
    await row(target.worker_id)
      .getByRole('button', { name: `Start ${target.worker_id}`, exact: true })
      .click();
    await page.locator(`#workers tr[data-worker-id="${target.worker_id}"][data-state="running"]`).waitFor({
      timeout: 20_000,
    });
    const started = (await workers()).find((w) => w.worker_id === target.worker_id)!;
    expect(started.state).toBe('running');
    expect(started.pid).not.toBe(target.pid);
  });

  it('restarts a worker from its row: same id, new process', async () => {
    const [, target] = await liveHttp();
    await row(target.worker_id)
      .getByRole('button', { name: `Restart ${target.worker_id}`, exact: true })
      .click();
    await page.locator('#toast').getByText(`${target.worker_id} restarted`).waitFor({ timeout: 20_000 });
    const restarted = (await workers()).find((w) => w.worker_id === target.worker_id)!;
    expect(restarted.state).toBe('running');
    expect(restarted.pid).not.toBe(target.pid);
    await eventually(
      async () => row(target.worker_id).locator('td[data-label="PID"]').textContent(),
      (text) => text === String(restarted.pid),
      5000,
    );
    expect(await row(target.worker_id).locator('td[data-label="PID"]').textContent()).toBe(String(restarted.pid));
  });

  it('runs a rolling update from its button and shows its progress to the end', async () => {
    const before = (await liveHttp()).map((w) => w.worker_id);
    await page.getByRole('button', { name: 'Rolling update' }).click();
    await page.locator('#rolling[data-state="running"]').waitFor();
    expect(await page.locator('#rolling progress').getAttribute('max')).toBe(String(before.length));
    expect(await page.getByRole('button', { name: 'Rolling update' }).isDisabled()).toBe(true);
    await page.locator('#rolling[data-state="done"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('#rolling-summary').textContent()).toContain(`${before.length}/${before.length}`);
    expect(await page.locator('#rolling li').count()).toBe(before.length);
    const after = (await liveHttp()).map((w) => w.worker_id);
    expect(after).toHaveLength(before.length);
    expect(after.filter((id) => before.includes(id))).toEqual([]);
    for (const id of after) await row(id).waitFor({ timeout: 10_000 });
    await page.locator('#toast').getByText('Rolling update done').waitFor();
    await tracked.screenshot(`worker-dashboard-${backend.name}`);
  });

  it('shows a refused action as a notice with the platform’s message', async () => {
    const errorsBefore = tracked.errors.length;
    await page.getByRole('spinbutton', { name: 'Live workers' }).fill('9');
    await page.getByRole('button', { name: 'Scale' }).click();
    const notice = page.locator('#toast .error').last();
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(/9 http worker\(s\) do not fit the 4 pre-allocated ports/);
    expect(await liveHttp()).toHaveLength(3);
    expect(tracked.errors.slice(errorsBefore)).toEqual([expect.stringMatching(expectedFailure(409))]);
  });

  it('forgets the secret on request and asks for it again', async () => {
    const forget = page.getByRole('button', { name: 'Forget secret' });
    await forget.click();
    await page.getByRole('textbox', { name: 'Manager secret' }).waitFor();
    expect(await page.locator('#dashboard').isHidden()).toBe(true);
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await page.keyboard.type(manager.secret);
    await page.keyboard.press('Enter');
    await page.locator('#workers tbody tr[data-worker-id]').first().waitFor();
    expect(await forget.isVisible()).toBe(true);
  });

  it('keeps keyboard focus on a row’s button across refreshes', async () => {
    const [target] = await liveHttp();
    const restart = row(target.worker_id).getByRole('button', { name: `Restart ${target.worker_id}`, exact: true });
    await restart.focus();
    const updated = await page.locator('#updated').textContent();
    await eventually(
      () => page.locator('#updated').textContent(),
      (text) => text !== updated,
      10_000,
    );
    expect(await page.evaluate<string | undefined>('document.activeElement?.dataset.focus')).toBe(
      `restart:${target.worker_id}`,
    );
  });

  it('fits a phone width: worker rows become cards, nothing scrolls sideways', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.page.goto(`${manager.api}/`);
    await phone.page.getByRole('textbox', { name: 'Manager secret' }).fill(manager.secret);
    await phone.page.getByRole('button', { name: 'Connect' }).click();
    await phone.page.locator('#workers tbody tr[data-worker-id]').first().waitFor();
    const overflow = await phone.page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    const first = phone.page.locator('#workers tbody tr[data-worker-id]').first();
    const idCell = (await first.locator('th').boundingBox())!;
    const portCell = (await first.locator('td[data-label="Port"]').boundingBox())!;
    expect(portCell.y).toBeGreaterThan(idCell.y);
    expect(portCell.x + portCell.width).toBeLessThanOrEqual(390);
    await phone.screenshot(`worker-dashboard-phone-${backend.name}`);
    expect(phone.errors).toEqual([expect.stringMatching(expectedFailure(401))]);
  });
});

// Through nginx at /admin/manager/: basic auth, nginx adds the secret, the page's relative URLs resolve under the prefix.
describe.each(backends())('worker manager dashboard behind a real nginx on $name', (backend) => {
  const password = 'dashboard horse battery';
  let nginx: NginxUnderTest;
  let manager: ManagerUnderTest;
  let browser: BrowserUnderTest;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    ({ nginx, manager } = await startManagerBehindNginx({
      env: { ADMIN_UI_PASSWORD: password, ...provisioned.env },
    }));
    browser = await startBrowser();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await manager?.stop();
    await nginx?.stop();
    await dispose?.();
  });

  it('shows the workers without asking for the secret, and reloads nginx from its button', async () => {
    const tracked = await browser.newPage();
    await tracked.context.setExtraHTTPHeaders({
      authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`,
    });
    await tracked.page.goto(`${nginx.url}/admin/manager/`);
    await tracked.page.locator('#workers tbody tr[data-worker-id]').first().waitFor();
    expect(await tracked.page.locator('#workers tbody tr[data-worker-id]').count()).toBe(2);
    expect(await tracked.page.locator('#secret-panel').isHidden()).toBe(true);
    expect(await tracked.page.getByRole('button', { name: 'Forget secret' }).isHidden()).toBe(true);
    expect(await tracked.page.locator('#system').textContent()).toContain('Set up');
    await tracked.page.getByRole('button', { name: 'Reload nginx' }).click();
    await tracked.page
      .locator('#toast')
      .getByText(/^nginx: /)
      .waitFor();
    expect(await tracked.page.locator('#toast .error').count()).toBe(0);
    expect(await tracked.page.evaluate<number>('sessionStorage.length')).toBe(0);
    expect(tracked.errors).toEqual([]);
  });
});
