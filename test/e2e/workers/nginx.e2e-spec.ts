import { access, readFile, rm, stat } from 'node:fs/promises';
import { Agent, get as httpGet } from 'node:http';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { compiledTb, freePortRange, startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';
import { runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';
import { prepareNginx, steadyClient, type NginxUnderTest } from '../../support/nginx-under-test.js';
import { WsClient } from '../../support/ws-worker-under-test.js';
import { writeWsTestMod } from '../../support/ws-test-mod.js';

const PASSWORD = 'correct horse battery';
/** Answers the steady client must get during each change: a few seconds of 4 loops give thousands. */
const MIN_ANSWERS = 500;
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
  let registry: TbProcess;
  let mcp: TbProcess;

  const tb = (argv: string[]) => runTb(main, argv, env);
  const httpWorkers = async () =>
    (await manager.json<Worker[]>('/api/workers')).filter((w) => w.type === 'http' && w.state === 'running');
  /** Which worker answered: the HTTP worker's /health names itself. */
  const servedBy = async () => ((await bodyOf(await fetch(`${nginx.url}/health`))) as { worker_id: string }).worker_id;
  const servedByPid = async () => ((await bodyOf(await fetch(`${nginx.url}/health`))) as { pid: number }).pid;
  /**
   * Runs `during` while a steady client sends GETs and POSTs through nginx, resending nothing; returns what the
   * client saw and whether nginx's worker processes were replaced meanwhile (a reload replaces every one).
   */
  const underLoad = async (during: () => Promise<void>) => {
    const nginxWorkers = await nginx.workerPids();
    const client = steadyClient(nginx.url, 4);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      await during();
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await client.stop();
    }
    const { ok, failed, byKind, failures } = client.outcome;
    // On a failure, show the kinds and what nginx logged (its error log names the upstream or client event).
    if (failed) failures.push(`by kind: ${JSON.stringify(byKind)}`, `nginx error log:\n${await nginx.errorLog()}`);
    return { ok, failed, failures, nginxReloaded: (await nginx.workerPids()).join() !== nginxWorkers.join() };
  };
  /** Every request answered 2xx, none resent, enough of them to mean something, and no nginx reload. */
  const expectNoFailure = (outcome: Awaited<ReturnType<typeof underLoad>>) => {
    expect(outcome.failures).toEqual([]);
    expect(outcome.failed).toBe(0);
    expect(outcome.ok).toBeGreaterThan(MIN_ANSWERS);
    expect(outcome.nginxReloaded).toBe(false);
  };

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    nginx = await prepareNginx();
    main = await compiledTb();
    const managerPort = await freePortRange(1);
    const httpBase = await freePortRange(6);
    const wsBase = await freePortRange(2);
    const [registryPort, mcpPort] = [await freePortRange(1), await freePortRange(1)];
    env = {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: join(nginx.prefix, 'data'),
      ADMIN_UI_PASSWORD: PASSWORD,
      MANAGER_PORT: String(managerPort),
      HTTP_WORKER_PORT: String(httpBase),
      WS_WORKER_PORT: String(wsBase),
      MANAGER_HTTP_PORT_SLOTS: '6',
      MANAGER_WS_PORT_SLOTS: '2',
      // The chat test mod's WebSocket handlers are open (the upgrade test goes through nginx to them).
      OPEN_MODULES: 'chat',
      REGISTRY_HOST: '127.0.0.1',
      REGISTRY_PORT: String(registryPort),
      MCP_PORT: String(mcpPort),
      // The steady client sends far more than a browser would; the limit itself is tested on the auth zone.
      NGINX_API_RATE: '0',
      // python_execute has its own suite; its sandbox would cost the MCP transport a core for seconds at start.
      MCP_PYTHON: 'off',
      ...nginx.env,
      ...provisioned.env,
    };
    expect((await tb(['workers', 'nginx-init'])).code).toBe(0);
    const configured = await tb(['workers', 'nginx-config', '--write-htpasswd']);
    expect(configured.stdout).toContain('nginx -t: configuration OK');
    expect(configured.code).toBe(0);
    await nginx.start();
    await writeWsTestMod(join(env.DATA_DIR, 'mods'));
    // One after the other: both migrate the same fresh database on start.
    registry = startTb(main, ['registry'], env);
    await registry.line((line) => line.startsWith('Registry ready'), 90_000);
    mcp = startTb(main, ['mcp'], env);
    await mcp.line((line) => line.startsWith('MCP transport ready'), 90_000);
    manager = await startManager({
      httpWorkers: 2,
      httpSlots: 6,
      // A drain timeout far above any real drain: an idle worker must not run it out (the rolling update tests).
      env: { ...env, MANAGER_RESTART_DELAY_SECONDS: '4', DRAIN_TIMEOUT_SECONDS: '30' },
      fixedPorts: { httpBase, wsBase },
    });
  }, 180_000);

  afterAll(async () => {
    await manager?.stop();
    await registry?.stop();
    await mcp?.stop();
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
    // The reload was waited for: new nginx workers run and the old ones have exited.
    const nginxWorkers = await nginx.workerPids();
    expect((await tb(['workers', 'nginx-reload'])).stdout).toMatch(/^✓ nginx reloaded$/m);
    for (const pid of await nginx.workerPids()) expect(nginxWorkers).not.toContain(pid);
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

  it('sends the WebSocket upgrade through nginx to the WS worker', async () => {
    const client = new WsClient(`ws://127.0.0.1:${nginx.port}/ws/chat/room`);
    expect(await client.connected()).toEqual(expect.any(String));
    client.close();
  });

  it('routes /registry/ to the registry (prefix stripped) and /mcp to the MCP transport', async () => {
    const packages = await fetch(`${nginx.url}/registry/api/v1/packages`);
    expect(packages.status).toBe(200);
    expect(await bodyOf(packages)).toMatchObject({ packages: [], total: 0 });
    const tools = await fetch(`${nginx.url}/mcp/tools/list`, { method: 'POST', body: '{}' });
    expect(tools.status).toBe(401);
    expect(await bodyOf(tools)).not.toHaveProperty('code', 'SERVICE_UNAVAILABLE');
  });

  it("answers the auth endpoints' rate limit with a JSON 429", async () => {
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () =>
        fetch(`${nginx.url}/IsValidSession`).then(async (r) => ({ r, body: await r.text() })),
      ),
    );
    const limited = statuses.filter(({ r }) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0].r.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(limited[0].body)).toMatchObject({ code: 'RATE_LIMITED' });
  });

  /** Runs a rolling update to its end; also returns the most HTTP workers that held a port at one time meanwhile. */
  const rollingUpdate = async () => {
    expect((await manager.request('/api/rolling-update', { method: 'POST' })).status).toBe(202);
    let mostLive = 0;
    const update = await eventually(
      async () => {
        const live = (await manager.json<Worker[]>('/api/workers')).filter(
          (w) => w.type === 'http' && w.state !== 'stopped' && w.state !== 'failed',
        );
        mostLive = Math.max(mostLive, live.length);
        return (await manager.json('/api/status')).rolling_update;
      },
      (state) => state.state !== 'running',
      90_000,
    );
    return { update, mostLive };
  };

  it('sees 0 failed requests and no nginx reload during a rolling update; the new workers serve afterwards', async () => {
    const before = (await httpWorkers()).map((w) => w.worker_id);
    let mostLive = 0;
    const outcome = await underLoad(async () => {
      const result = await rollingUpdate();
      expect(result.update).toMatchObject({ state: 'done', errors: [] });
      mostLive = result.mostLive;
    });
    expectNoFailure(outcome);
    // Every replacement started (the slots allow it) before any old worker left: the old ones served meanwhile.
    expect(mostLive).toBe(2 * before.length);
    const now = new Set((await httpWorkers()).map((w) => w.worker_id));
    expect(now.size).toBe(before.length);
    for (const old of before) expect(now.has(old)).toBe(false);
    for (let i = 0; i < 10; i++) expect(now.has(await servedBy())).toBe(true);
  }, 120_000);

  it('replaces idle workers without running out their drain timeout', async () => {
    const before = (await httpWorkers()).map((w) => w.worker_id);
    const { update } = await rollingUpdate();
    expect(update).toMatchObject({ state: 'done', errors: [] });
    expect(update.replaced.map((pair: { old: string }) => pair.old).sort()).toEqual([...before].sort());
    // Nothing in flight: an old worker exits once nginx can no longer use its connections (at once without any),
    // not after DRAIN_TIMEOUT_SECONDS (30 s here; the manager would SIGKILL it 5 s later).
    for (const pair of update.replaced) expect(pair.drain_ms).toBeLessThan(30_000);
    // The new workers serve through nginx, concurrent first requests included: the manager made nginx use each new
    // port before the update ended, so none is still counted as failed from the load before.
    const now = new Set((await httpWorkers()).map((w) => w.worker_id));
    const seen = new Set(await Promise.all(Array.from({ length: 20 }, () => servedBy())));
    expect([...seen].sort()).toEqual([...now].sort());
  }, 120_000);

  /**
   * Sequential requests through nginx: least_conn with nothing in flight takes the ports in turn, so each free slot
   * refuses one of them and nginx counts that port as failed — what a moment of load leaves behind.
   */
  const markFreeSlotsFailed = async () => {
    for (let i = 0; i < 18; i++) expect((await fetch(`${nginx.url}/api/ping`)).status).toBe(200);
  };
  /**
   * `count` keep-alive client connections to nginx, opened by concurrent requests; `burst` then sends one GET on
   * each at the same instant (none resent) and returns the answers that are not 2xx. Connections opened before a
   * change make the burst's requests reach nginx together, as a busy site's would.
   */
  const burstClient = async (count: number) => {
    const agent = new Agent({ keepAlive: true, maxSockets: count });
    const get = () =>
      new Promise<number | string>((resolve) => {
        const req = httpGet(`${nginx.url}/api/ping`, { agent }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
        });
        req.once('error', (error) => resolve(error.message));
      });
    const all = () => Promise.all(Array.from({ length: count }, get));
    expect((await all()).filter((status) => status !== 200)).toEqual([]);
    return {
      burst: async () => (await all()).filter((status) => typeof status !== 'number' || status < 200 || status > 299),
      close: () => agent.destroy(),
    };
  };
  /** `requests_proxied` of each running HTTP worker, asked on its own port. */
  const proxiedCounts = async () =>
    Promise.all(
      (await httpWorkers()).map(async (w) => {
        const metrics = (await bodyOf(await fetch(`http://127.0.0.1:${w.port}/metrics`))) as {
          requests_proxied: number;
        };
        return { worker_id: w.worker_id, requests_proxied: metrics.requests_proxied };
      }),
    );

  it.each([
    [
      'an idle rolling update',
      'every new worker',
      async () => {
        const { update } = await rollingUpdate();
        expect(update).toMatchObject({ state: 'done', errors: [] });
      },
    ],
    [
      'an idle restart',
      'every restarted worker',
      async () => {
        expect((await manager.request('/api/restart', { method: 'POST' })).status).toBe(200);
      },
    ],
  ])(
    'answers a burst of concurrent requests right after %s: nginx has used %s',
    async (_operation, _workers, operate) => {
      await markFreeSlotsFailed();
      const client = await burstClient(32);
      await operate();
      const used = await proxiedCounts();
      const failures = await client.burst();
      client.close();
      expect(failures).toEqual([]);
      // The manager itself made nginx succeed once on each new port before the old workers left.
      for (const count of used) expect(count.requests_proxied).toBeGreaterThan(0);
    },
    120_000,
  );

  it('sees 0 failed requests and no nginx reload while every worker restarts; new processes serve afterwards', async () => {
    const before = await httpWorkers();
    const outcome = await underLoad(async () => {
      const restarted = await manager.request('/api/restart', { method: 'POST' });
      expect(restarted.status).toBe(200);
    });
    expectNoFailure(outcome);
    const now = await httpWorkers();
    expect(now.map((w) => w.worker_id).sort()).toEqual(before.map((w) => w.worker_id).sort());
    const newPids = new Set(now.map((w) => w.pid));
    for (const old of before) expect(newPids.has(old.pid)).toBe(false);
    for (let i = 0; i < 10; i++) expect(newPids.has(await servedByPid())).toBe(true);
  }, 120_000);

  it('sees 0 failed requests and no nginx reload while scaling 2 → 4 → 1 → 2; the remaining workers serve afterwards', async () => {
    const outcome = await underLoad(async () => {
      expect((await manager.json('/api/scale', { body: { type: 'http', count: 4 } })).started).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await manager.json('/api/scale', { body: { type: 'http', count: 1 } })).stopped).toHaveLength(3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await manager.json('/api/scale', { body: { type: 'http', count: 2 } })).started).toHaveLength(1);
    });
    expectNoFailure(outcome);
    const now = new Set((await httpWorkers()).map((w) => w.worker_id));
    expect(now.size).toBe(2);
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) seen.add(await servedBy());
    for (const id of seen) expect(now.has(id)).toBe(true);
  }, 120_000);

  it('answers JSON 502 when the service behind a location is down', async () => {
    await mcp.stop();
    const response = await fetch(`${nginx.url}/mcp/tools/list`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(502);
    expect(await bodyOf(response)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });

  it('refuses to scale past the slots with 409 naming the fix, and the fix lists the new ports', async () => {
    const refused = await manager.request('/api/scale', { body: { type: 'http', count: 7 } });
    expect(refused.status).toBe(409);
    expect((await bodyOf(refused)).message).toContain('nginx-config --force');
    const forced = await tb(['workers', 'nginx-config', '--force']);
    expect(forced.code).toBe(0);
    const wider = await runTb(main, ['workers', 'nginx-config', '--force'], { ...env, MANAGER_HTTP_PORT_SLOTS: '8' });
    expect(wider.stdout).toContain('nginx -t: configuration OK');
    const site = await readFile(join(nginx.confDir, 'box-available', 'toolbox'), 'utf8');
    expect(site).toContain(`server 127.0.0.1:${manager.httpBase + 7} max_fails=1 fail_timeout=1s;`);
    expect(site).not.toMatch(/\bdown;/);
    expect((await tb(['workers', 'nginx-reload'])).code).toBe(0);
    expect((await fetch(`${nginx.url}/api/ping`)).status).toBe(200);
  });

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
