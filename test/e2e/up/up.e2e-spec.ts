import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { descendants, runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { alive, compiledTb, freePortRange } from '../../support/manager-under-test.js';

/** `tb up` (npm start) as a real process on free ports: every service, a token, SIGTERM without orphans. */
describe.each(backends())('tb up on $name', (backend) => {
  let root: string;
  let env: Record<string, string>;
  let up: TbProcess;
  let main: string;
  let dispose: () => Promise<void>;
  const ports = { registry: 0, mcp: 0, gateway: 0, manager: 0, http: 0, ws: 0, ollama: 0 };

  beforeAll(async () => {
    main = await compiledTb();
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    root = await mkdtemp(join(tmpdir(), 'tb-up-'));
    for (const name of Object.keys(ports) as (keyof typeof ports)[])
      ports[name] = await freePortRange(name === 'http' ? 4 : 1);
    env = {
      ...provisioned.env,
      DATA_DIR: join(root, 'data'),
      REGISTRY_PORT: String(ports.registry),
      MCP_PORT: String(ports.mcp),
      GATEWAY_PORT: String(ports.gateway),
      MANAGER_PORT: String(ports.manager),
      HTTP_WORKER_PORT: String(ports.http),
      MANAGER_HTTP_PORT_SLOTS: '4',
      WS_WORKER_PORT: String(ports.ws),
      MANAGER_WS_PORT_SLOTS: '1',
      MANAGER_HEALTH_INTERVAL_SECONDS: '0.3',
      DRAIN_TIMEOUT_SECONDS: '3',
      // Nothing listens there: the gateway must still start and answer /health without Ollama.
      OLLAMA_URL: `http://127.0.0.1:${ports.ollama}`,
      NGINX_BIN: '/nonexistent/nginx',
      // python_execute has its own suite; its sandbox would cost the MCP transport a core for seconds at start.
      MCP_PYTHON: 'off',
      LOG_FORMAT: 'json',
    };
    up = startTb(main, ['up'], env);
    await up
      .line((line) => line.startsWith('Toolbox Platform is up'), 240_000)
      .catch((error: Error) => {
        throw new Error(`${error.message}\n${up.stdout()}\n${up.stderr()}`);
      });
  }, 300_000);

  afterAll(async () => {
    if (up && up.child.exitCode === null && up.child.signalCode === null) await up.stop('SIGKILL');
    await dispose?.();
    await rm(root, { recursive: true, force: true });
  });

  it('prints every URL, how to get a token, and that it runs without nginx', () => {
    const out = up.stdout();
    expect(out).toContain(`Registry  http://127.0.0.1:${ports.registry}/api/v1`);
    expect(out).toContain(`MCP       http://127.0.0.1:${ports.mcp}/mcp`);
    expect(out).toContain(`Gateway   http://127.0.0.1:${ports.gateway}/v1`);
    expect(out).toContain(`Workers   HTTP http://127.0.0.1:${ports.http}`);
    expect(out).toContain(`Manager   http://127.0.0.1:${ports.manager}/`);
    expect(out).toContain('Get a token: npx tb token --user 1 --username you');
    expect(out).toContain('nginx: not installed — running without it');
  });

  it('answers every service’s health URL', async () => {
    for (const port of [ports.registry, ports.mcp, ports.gateway, ports.http, ports.ws]) {
      const response = await fetch(`http://127.0.0.1:${port}/health`);
      expect({ port, status: response.status }).toEqual({ port, status: 200 });
    }
    const state = JSON.parse(await readFile(join(env.DATA_DIR, 'manager.json'), 'utf8')) as { secret: string };
    const manager = await fetch(`http://127.0.0.1:${ports.manager}/api/health`, {
      headers: { 'x-cluster-secret': state.secret },
    });
    expect(manager.status).toBe(200);
    expect(await manager.json()).toMatchObject({ healthy: true });
  });

  it('keeps one generated platform secret (0600) that the registry and workers share, so tb token works', async () => {
    expect((await stat(join(env.DATA_DIR, 'jwt-secret'))).mode & 0o777).toBe(0o600);
    const token = await runTb(main, ['token', '--user', '1', '--username', 'you'], env);
    expect(token.code).toBe(0);
    const jwt = token.stdout.trim().split('\n').at(-1)!;
    const me = await fetch(`http://127.0.0.1:${ports.registry}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'you' });
    const forged = await fetch(`http://127.0.0.1:${ports.registry}/api/v1/auth/me`, {
      headers: { authorization: `Bearer ${jwt.slice(0, -2)}xx` },
    });
    expect(forged.status).toBe(401);
  });

  it('refuses to start a second platform on taken ports, naming them, and starts nothing', async () => {
    const second = await runTb(main, ['up', '--services', 'mcp,registry'], { ...env, DATA_DIR: join(root, 'second') });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`port ${ports.registry} (registry), port ${ports.mcp} (mcp) in use`);
    expect(second.stdout).not.toContain('[registry]');
  }, 60_000);

  it('exits 1 naming a service that exits before it is ready, and stops the ones started', async () => {
    // A second manager on the same data directory says "already running" and exits 0: not ready.
    const third = await runTb(main, ['up', '--services', 'mcp,manager'], {
      ...env,
      MCP_PORT: String(await freePortRange(1)),
      HTTP_WORKER_PORT: String(await freePortRange(4)),
      WS_WORKER_PORT: String(await freePortRange(1)),
    });
    expect(third.code).toBe(1);
    expect(third.stderr).toContain('tb up: manager exited (code 0) before it was ready');
    expect(third.stdout).toContain('[mcp] MCP transport ready');
    expect(third.stdout).toContain('tb up: manager did not start, stopping mcp, manager');
    expect(third.stdout).toContain('tb up: stopped');
  }, 120_000);

  it('stops every service on SIGTERM, exits 0 and leaves no child process', async () => {
    const children = await descendants(up.child.pid!);
    // registry, mcp, gateway, manager and the manager's HTTP + WS workers
    expect(children.length).toBeGreaterThanOrEqual(6);
    up.child.kill('SIGTERM');
    expect(await up.exited).toBe(0);
    expect(up.stdout()).toContain('tb up: stopped');
    const deadline = Date.now() + 10_000;
    while (children.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(children.filter(alive)).toEqual([]);
  }, 60_000);
});
