import { access, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { compiledTb, freePortRange, startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';
import { runTb } from '../../support/child-processes.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';
import { prepareNginx, steadyClient, type NginxUnderTest } from '../../support/nginx-under-test.js';

const PASSWORD = 'correct horse battery';
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const bodyOf = (response: Response): Promise<any> => response.json();

interface Worker {
  worker_id: string;
  type: string;
  pid: number | null;
  port: number;
  state: string;
}

// The real nginx (Debian's package, `.ci/run` installs nginx-light when missing) in front of a real manager.
describe.each(backends())('the worker manager behind a real nginx ($name)', (backend) => {
  let nginx: NginxUnderTest;
  let manager: ManagerUnderTest;
  let dispose: () => Promise<void>;
  let env: Record<string, string>;
  let main: string;

  const tb = (argv: string[]) => runTb(main, argv, env);
  const httpWorkers = async () =>
    (await manager.json<Worker[]>('/api/workers')).filter((w) => w.type === 'http' && w.state === 'running');
  /** Which worker answered: the HTTP worker's /health names itself. */
  const servedBy = async () => ((await bodyOf(await fetch(`${nginx.url}/health`))) as { worker_id: string }).worker_id;

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    nginx = await prepareNginx();
    main = await compiledTb();
    const managerPort = await freePortRange(1);
    const httpBase = await freePortRange(6);
    const wsBase = await freePortRange(2);
    env = {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: join(nginx.prefix, 'data'),
      ADMIN_UI_PASSWORD: PASSWORD,
      MANAGER_PORT: String(managerPort),
      HTTP_WORKER_PORT: String(httpBase),
      WS_WORKER_PORT: String(wsBase),
      MANAGER_HTTP_PORT_SLOTS: '6',
      MANAGER_WS_PORT_SLOTS: '2',
      ...nginx.env,
      ...provisioned.env,
    };
    expect((await tb(['workers', 'nginx-init'])).code).toBe(0);
    const configured = await tb(['workers', 'nginx-config', '--write-htpasswd']);
    expect(configured.stdout).toContain('nginx -t: configuration OK');
    expect(configured.code).toBe(0);
    await nginx.start();
    manager = await startManager({
      httpWorkers: 2,
      httpSlots: 6,
      env: { ...env, MANAGER_RESTART_DELAY_SECONDS: '4' },
      fixedPorts: { httpBase, wsBase },
    });
  }, 180_000);

  afterAll(async () => {
    await manager?.stop();
    await nginx?.stop();
    await dispose?.();
  });

  it('nginx-init patched the main config once; a second run has nothing to do', async () => {
    const text = await readFile(join(nginx.confDir, 'nginx.conf'), 'utf8');
    expect(text.match(/box-enabled/g)).toHaveLength(1);
    const again = await tb(['workers', 'nginx-init']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    await access(join(nginx.confDir, 'nginx.conf.bak'));
  });

  it('nginx-check prints every check passing', async () => {
    const check = await tb(['workers', 'nginx-check']);
    expect(check.code).toBe(0);
    for (const label of [
      'nginx.conf path',
      'box-enabled include',
      'site config',
      'site symlink',
      'nginx version',
      'htpasswd',
    ])
      expect(check.stdout).toMatch(new RegExp(`✓ ${label}`));
    expect(check.stdout).not.toContain('✗');
  });

  it('writes the site 0640 and the htpasswd 0640 with an apr1 hash', async () => {
    const site = join(nginx.confDir, 'box-available', 'toolbox');
    expect((await stat(site)).mode & 0o777).toBe(0o640);
    const htpasswd = join(nginx.confDir, 'toolbox_admin_htpasswd');
    expect((await stat(htpasswd)).mode & 0o777).toBe(0o640);
    expect(await readFile(htpasswd, 'utf8')).toMatch(/^admin:\$apr1\$[./0-9A-Za-z]{8}\$[./0-9A-Za-z]{22}\n$/);
  });

  it('nginx-config keeps an existing site without --force and rewrites it with --force', async () => {
    const kept = await tb(['workers', 'nginx-config']);
    expect(kept.stdout).toContain('site config kept');
    const forced = await tb(['workers', 'nginx-config', '--force']);
    expect(forced.stdout).toContain('site config written');
    expect(forced.code).toBe(0);
    expect((await tb(['workers', 'nginx-reload'])).stdout).toContain('✓ nginx reloaded');
  });

  it('sends requests to every HTTP worker', async () => {
    const ids = new Set((await httpWorkers()).map((w) => w.worker_id));
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < ids.size; i++) seen.add(await servedBy());
    expect(seen).toEqual(ids);
  });

  it('skips a killed worker (passive check): no failed request', async () => {
    const [victim] = await httpWorkers();
    process.kill(victim.pid!, 'SIGKILL');
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await fetch(`${nginx.url}/api/ping`)).status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // The manager restarts it after MANAGER_RESTART_DELAY_SECONDS with the same id and port.
    await eventually(
      async () => (await httpWorkers()).map((w) => w.worker_id),
      (ids) => ids.includes(victim.worker_id),
      20_000,
    );
  }, 30_000);

  it('guards the admin UI with basic auth: 401 without or with a wrong password, 200 with it', async () => {
    const none = await fetch(`${nginx.url}/admin/manager/api/status`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Basic');
    const wrong = await fetch(`${nginx.url}/admin/manager/api/status`, {
      headers: { authorization: basic('admin', 'nope') },
    });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${nginx.url}/admin/manager/api/status`, {
      headers: { authorization: basic('admin', PASSWORD) },
    });
    expect(right.status).toBe(200);
    const status = await bodyOf(right);
    expect(Object.keys(status.workers).length).toBeGreaterThanOrEqual(3);
    expect(status.nginx).toMatchObject({ installed: true, configured: true });
  });

  it('a client cannot smuggle its own X-Cluster-Secret past nginx to the workers', async () => {
    const response = await fetch(`${nginx.url}/admin/manager/api/status`, {
      headers: { 'x-cluster-secret': manager.secret },
    });
    expect(response.status).toBe(401);
  });

  it('sees 0 failed requests from a steady client during a rolling update and scaling 2 → 4 → 1 → 2', async () => {
    const client = steadyClient(nginx.url, 4);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = (await httpWorkers()).map((w) => w.worker_id);
    expect((await manager.request('/api/rolling-update', { method: 'POST' })).status).toBe(202);
    const update = await eventually(
      async () => (await manager.json('/api/status')).rolling_update,
      (state) => state.state !== 'running',
      90_000,
    );
    expect(update).toMatchObject({ state: 'done', errors: [] });
    expect((await manager.json('/api/scale', { body: { type: 'http', count: 4 } })).started).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await manager.json('/api/scale', { body: { type: 'http', count: 1 } })).stopped).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await manager.json('/api/scale', { body: { type: 'http', count: 2 } })).started).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const outcome = await client.stop();
    expect(outcome.failures).toEqual([]);
    expect(outcome.ok).toBeGreaterThan(100);
    const now = new Set((await httpWorkers()).map((w) => w.worker_id));
    for (const old of before) expect(now.has(old)).toBe(false);
    for (let i = 0; i < 10; i++) expect(now.has(await servedBy())).toBe(true);
  }, 180_000);

  it('answers 401 for the admin UI while the credentials file is missing', async () => {
    await rm(join(nginx.confDir, 'toolbox_admin_htpasswd'));
    expect((await tb(['workers', 'nginx-config', '--force'])).code).toBe(0);
    expect((await tb(['workers', 'nginx-reload'])).code).toBe(0);
    const response = await fetch(`${nginx.url}/admin/manager/api/status`, {
      headers: { authorization: basic('admin', PASSWORD) },
    });
    expect(response.status).toBe(401);
    expect((await bodyOf(response)).message).toContain('--write-htpasswd');
    const check = await tb(['workers', 'nginx-check']);
    expect(check.stdout).toContain('✗ htpasswd');
  });
});
