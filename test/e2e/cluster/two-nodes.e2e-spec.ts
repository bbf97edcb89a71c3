import { get as httpGet } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JwtService } from '@nestjs/jwt';
import { TokenVerifier } from '../../../src/auth/token-verifier.js';
import { loadConfig } from '../../../src/config/config.js';
import { FakeOllama } from '../../fixtures/fake-ollama.js';
import { ApiClient } from '../../support/api-client.js';
import { backends } from '../../support/backends.js';
import { descendants, runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { eventually } from '../../support/eventually.js';
import { compiledTb, freePortRange } from '../../support/manager-under-test.js';
import { prepareNginx, type NginxUnderTest } from '../../support/nginx-under-test.js';
import { createPackage, uploadVersion } from '../../support/registry-fixtures.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';
import { startS3Server } from '../../support/s3-server.js';

const CLUSTER_SECRET = 'two-nodes-cluster-secret-0123456789';
const tokens = new TokenVerifier(new JwtService({}), loadConfig({ PLATFORM_JWT_SECRET: TEST_SECRET }));
const tokenFor = (id: string) => tokens.sign({ userId: id, username: id, ttlSeconds: 3600 });

/** One node as an operator runs it: `tb up` with the production variables, its own data directory, ports and nginx. */
interface Node {
  name: string;
  env: Record<string, string>;
  ports: { registry: number; mcp: number; gateway: number; manager: number; http: number; ws: number };
  nginx: NginxUnderTest;
  up: TbProcess;
  registry: string;
  gateway: string;
}

/** The processes below `pid` that run `tb <word>` (the registry or MCP child of `tb up`). */
async function childRunning(pid: number, word: string): Promise<number> {
  for (const child of await descendants(pid)) {
    const argv = (await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv.includes(word)) return child;
  }
  throw new Error(`no process running "${word}" below ${pid}`);
}

/** One GET on a connection of its own (no keep-alive). */
function getOnNewConnection(url: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.once('error', reject);
  });
}

const mysqlRedis = backends().find((backend) => backend.name === 'mysql+redis');

/**
 * Two complete nodes (`tb up` each, own DATA_DIR and ports, own nginx with the generated site, managers joined to
 * each other) over one MariaDB database, one Redis and one S3 store (s3rver): what holds across nodes at once, and
 * what a node's nginx does when a service of that node dies. Runs where the production engines are configured
 * (TEST_MYSQL_URL and TEST_REDIS_URL, as CI sets them).
 */
(mysqlRedis ? describe : describe.skip)('two nodes over MariaDB, Redis, S3 and nginx', () => {
  const nodes: Node[] = [];
  let s3: { port: number; stop(): Promise<void> };
  let root: string;
  let ollama: FakeOllama;
  let dispose: () => Promise<void>;
  let adminKey: string;
  const [a, b] = [() => nodes[0], () => nodes[1]];

  async function startNode(name: string, shared: Record<string, string>): Promise<Node> {
    const nginx = await prepareNginx();
    const ports = {
      registry: await freePortRange(1),
      mcp: await freePortRange(1),
      gateway: await freePortRange(1),
      manager: await freePortRange(1),
      http: await freePortRange(1),
      ws: await freePortRange(1),
    };
    const env: Record<string, string> = {
      ...shared,
      ...nginx.env,
      DATA_DIR: join(root, name),
      REGISTRY_PORT: String(ports.registry),
      MCP_PORT: String(ports.mcp),
      GATEWAY_PORT: String(ports.gateway),
      MANAGER_PORT: String(ports.manager),
      HTTP_WORKER_PORT: String(ports.http),
      HTTP_WORKERS: '1',
      MANAGER_HTTP_PORT_SLOTS: '1',
      WS_WORKER_PORT: String(ports.ws),
      MANAGER_WS_PORT_SLOTS: '1',
    };
    const main = await compiledTb();
    for (const argv of [
      ['workers', 'nginx-init'],
      ['workers', 'nginx-config'],
    ]) {
      const result = await runTb(main, argv, env);
      if (result.code !== 0) throw new Error(`tb ${argv.join(' ')} failed:\n${result.stdout}${result.stderr}`);
    }
    await nginx.start();
    const up = startTb(main, ['up'], env);
    await up
      .line((line) => line.startsWith('Toolbox Platform is up'), 240_000)
      .catch((error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      });
    return {
      name,
      env,
      ports,
      nginx,
      up,
      registry: `http://127.0.0.1:${ports.registry}`,
      gateway: `http://127.0.0.1:${ports.gateway}`,
    };
  }

  const gatewayCall = async (node: Node, method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(`${node.gateway}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    const provisioned = await mysqlRedis!.provision();
    dispose = provisioned.dispose;
    root = await mkdtemp(join(tmpdir(), 'tb-two-nodes-'));
    s3 = await startS3Server();
    ollama = new FakeOllama();
    const shared = {
      ...provisioned.env,
      PLATFORM_JWT_SECRET: TEST_SECRET,
      CLUSTER_SECRET,
      STORAGE_PRIMARY: `s3://S3RVER:S3RVER@127.0.0.1:${s3.port}/two-nodes?tls=false&create_bucket=true`,
      OLLAMA_URL: await ollama.start(),
      RATE_LIMIT_ANON_PER_HOUR: '100000',
      RATE_LIMIT_AUTH_PER_HOUR: '100000',
      MANAGER_HEALTH_INTERVAL_SECONDS: '0.5',
      MANAGER_CLUSTER_POLL_SECONDS: '0.5',
      DRAIN_TIMEOUT_SECONDS: '3',
      // python_execute has its own suite; its sandbox would cost each node's MCP transport a core for seconds.
      MCP_PYTHON: 'off',
      LOG_FORMAT: 'json',
    };
    // One after the other: the first node migrates the shared database.
    nodes.push(await startNode('a', shared));
    nodes.push(await startNode('b', shared));
    for (const [from, to] of [
      [a(), b()],
      [b(), a()],
    ]) {
      const joined = await runTb(
        await compiledTb(),
        ['workers', 'cluster-join', '--host', '127.0.0.1', '--port', String(to.ports.manager)],
        from.env,
      );
      if (joined.code !== 0)
        throw new Error(`cluster-join ${from.name} → ${to.name}: ${joined.stdout}${joined.stderr}`);
    }
    adminKey = /Admin key \(shown once; [^)]*\): (sk-tb-[0-9a-f]{48})/.exec(a().up.stdout())?.[1] ?? '';
  }, 600_000);

  afterAll(async () => {
    for (const node of nodes) {
      node.up.child.kill('SIGCONT');
      await node.up.stop('SIGTERM');
      await node.nginx.stop();
    }
    await s3?.stop();
    await ollama?.stop();
    await dispose?.();
    await rm(root, { recursive: true, force: true });
  }, 120_000);

  describe('a package page', () => {
    it('shows a version yanked on B as yanked on A at once, with the new latest version', async () => {
      const owner = new ApiClient(b().registry, tokenFor('two-nodes-owner'));
      const publisher = await owner.post('/api/v1/auth/register-publisher', {
        name: 'two-nodes-pub',
        display_name: 'Two nodes',
      });
      expect(publisher.status).toBe(201);
      await createPackage(owner, 'two-nodes-pkg');
      for (const version of ['1.0.0', '2.0.0'])
        expect((await uploadVersion(owner, 'two-nodes-pkg', version)).status).toBe(201);
      const onA = new ApiClient(a().registry);
      // A caches the page of a public package.
      for (let i = 0; i < 2; i++)
        expect((await onA.get('/api/v1/packages/two-nodes-pkg')).body.latest_version).toBe('2.0.0');
      const yanked = await owner.post('/api/v1/packages/two-nodes-pkg/versions/2.0.0/yank', { reason: 'broken' });
      expect(yanked.status).toBe(200);
      const started = Date.now();
      const page = await eventually(
        () => onA.get('/api/v1/packages/two-nodes-pkg'),
        (response) => response.body.latest_version === '1.0.0',
        1_000,
      );
      // How long A kept the old page after B answered the yank (docs/deployment.md).
      console.log(`two nodes: a yank on B reached A's package page after ${Date.now() - started} ms`);
      expect(page.status).toBe(200);
      expect(page.body.latest_version).toBe('1.0.0');
      expect(page.body.versions.find((version: { version: string }) => version.version === '2.0.0').yanked).toBe(true);
    });

    it('counts a package created on B in the empty search on A at once', async () => {
      const onA = new ApiClient(a().registry);
      const before = (await onA.get('/api/v1/search?q=')).body.total as number;
      expect((await onA.get('/api/v1/search?q=')).body.total).toBe(before);
      const owner = new ApiClient(b().registry, tokenFor('two-nodes-counter'));
      const publisher = await owner.post('/api/v1/auth/register-publisher', {
        name: 'two-nodes-counter',
        display_name: 'Two nodes counter',
      });
      expect(publisher.status).toBe(201);
      await createPackage(owner, 'two-nodes-counted');
      const after = await eventually(
        () => onA.get('/api/v1/search?q='),
        (response) => response.body.total === before + 1,
        1_000,
      );
      expect(after.status).toBe(200);
      expect(after.body.total).toBe(before + 1);
    });

    it('serves on A the file published on B, from the shared object store', async () => {
      const download = await new ApiClient(a().registry).get('/api/v1/packages/two-nodes-pkg/versions/1.0.0');
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toContain('zip');
    });
  });

  describe('the gateway', () => {
    it('prints the admin key on the first node only, and the same key is the admin on both', async () => {
      expect(adminKey).toMatch(/^sk-tb-/);
      expect(a().up.stdout()).toContain('the database keeps only its hash');
      expect(b().up.stdout()).not.toContain('Admin key');
      for (const node of nodes)
        expect((await gatewayCall(node, 'GET', '/admin/api/config', adminKey)).status).toBe(200);
    });

    it('holds a settings change made on A on B at once', async () => {
      const patched = await gatewayCall(a(), 'PATCH', '/admin/api/config', adminKey, { rate_limits: { payg: 7 } });
      expect(patched.status).toBe(200);
      const onB = await gatewayCall(b(), 'GET', '/admin/api/config', adminKey);
      expect(onB.status).toBe(200);
      expect(onB.body.rate_limits).toEqual({ payg: 7, sub: 10 });
    });

    it('applies the new per-minute limit to calls on B', async () => {
      const user = await gatewayCall(a(), 'POST', '/admin/api/users', adminKey, {
        email: 'two@example.com',
        balance: 5,
      });
      const key = (await gatewayCall(a(), 'POST', `/admin/api/users/${user.body.id}/keys`, adminKey, {})).body.key;
      const chat = await gatewayCall(b(), 'POST', '/v1/chat/completions', key, {
        model: 'llama3.2',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(chat.status).toBe(200);
      expect(chat.headers.get('x-ratelimit-limit-requests')).toBe('7');
    });

    it('refuses on B a key revoked on A at once', async () => {
      const user = await gatewayCall(a(), 'POST', '/admin/api/users', adminKey, { email: 'revoked@example.com' });
      const issued = await gatewayCall(a(), 'POST', `/admin/api/users/${user.body.id}/keys`, adminKey, {});
      expect((await gatewayCall(b(), 'GET', '/v1/models', issued.body.key)).status).toBe(200);
      const revoked = await gatewayCall(
        a(),
        'DELETE',
        `/admin/api/users/${user.body.id}/keys/${issued.body.id}`,
        adminKey,
      );
      expect(revoked.status).toBe(200);
      const onB = await gatewayCall(b(), 'GET', '/v1/models', issued.body.key);
      expect(onB.status).toBe(401);
      expect(onB.body.error.code).toBe('invalid_api_key');
    });
  });

  describe('nginx in front of a node whose service died', () => {
    const site = (node: Node) => readFile(join(node.nginx.confDir, 'box-available', 'toolbox'), 'utf8');

    it('lists the other node’s registry and MCP transport as backups', async () => {
      const text = await eventually(
        () => site(a()),
        (config) => config.includes(`server 127.0.0.1:${b().ports.mcp} max_fails=1 fail_timeout=5s backup;`),
        15_000,
      );
      expect(text).toContain(`server 127.0.0.1:${b().ports.registry} max_fails=1 fail_timeout=5s backup;`);
      expect(text).toContain(`server 127.0.0.1:${b().ports.mcp} max_fails=1 fail_timeout=5s backup;`);
    });

    it('answers registry GETs from B while A’s registry is dead', async () => {
      // Pause A's `tb up` so it does not restart the registry, then kill the registry.
      const registry = await childRunning(a().up.child.pid!, 'registry');
      a().up.child.kill('SIGSTOP');
      process.kill(registry, 'SIGKILL');
      try {
        await eventually(
          () =>
            fetch(`${a().registry}/health`).then(
              () => 'up',
              () => 'down',
            ),
          (state) => state === 'down',
          5_000,
        );
        const statuses: number[] = [];
        let body: { latest_version?: string } = {};
        for (let i = 0; i < 10; i++) {
          const response = await fetch(`${a().nginx.url}/registry/api/v1/packages/two-nodes-pkg`);
          statuses.push(response.status);
          body = (await response.json()) as { latest_version?: string };
        }
        expect(statuses).toEqual(Array(10).fill(200));
        expect(body.latest_version).toBe('1.0.0');
      } finally {
        a().up.child.kill('SIGCONT');
      }
    }, 60_000);

    it('answers MCP requests from B while A’s MCP transport is dead', async () => {
      const created = await runTb(
        await compiledTb(),
        ['mcp', 'keys', 'create', 'two-nodes', '--permissions', 'read'],
        a().env,
      );
      const key = /(tb_mcp_[A-Za-z0-9_-]+)/.exec(created.stdout)![1];
      const mcp = await childRunning(a().up.child.pid!, 'mcp');
      a().up.child.kill('SIGSTOP');
      process.kill(mcp, 'SIGKILL');
      try {
        await eventually(
          () =>
            fetch(`http://127.0.0.1:${a().ports.mcp}/health`).then(
              () => 'up',
              () => 'down',
            ),
          (state) => state === 'down',
          5_000,
        );
        const response = await fetch(`${a().nginx.url}/mcp/tools/list`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: '{}',
        });
        expect(response.status).toBe(200);
        expect(((await response.json()) as { tools: unknown[] }).tools.length).toBeGreaterThan(0);
      } finally {
        a().up.child.kill('SIGCONT');
      }
    }, 60_000);
  });
});

/**
 * One node without Redis, its registry in two worker processes (`tb registry --workers 2`): the primary is the one
 * place that counts, so a limit of 20 admits 20 whichever worker each request reaches. Runs on every backend
 * setting (it needs no engine).
 */
describe('a registry in two worker processes without Redis', () => {
  let registry: TbProcess;
  let url: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tb-workers-limit-'));
    registry = startTb(await compiledTb(), ['registry', '--port', String(await freePortRange(1)), '--workers', '2'], {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      RATE_LIMIT_ANON_PER_HOUR: '20',
      RATE_LIMIT_AUTH_PER_HOUR: '20',
      LOG_FORMAT: 'json',
    });
    const ready = await registry.line((line) => line.includes('Registry ready at'), 120_000);
    url = /(http:\/\/[^/\s]+)/.exec(ready)![1];
  }, 180_000);

  afterAll(async () => {
    await registry?.stop('SIGTERM');
    await rm(dataDir, { recursive: true, force: true });
  });

  it('admits exactly 20 of 30 concurrent anonymous requests against a limit of 20', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () => fetch(`${url}/api/v1/packages`).then((response) => response.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
  });

  it('admits exactly 20 of 25 sequential requests of one user, spread over both workers', async () => {
    const token = tokenFor('sequential-user');
    const statuses: number[] = [];
    // A new connection each time, so the primary hands the requests to both workers in turn.
    for (let i = 0; i < 25; i++) statuses.push((await getOnNewConnection(`${url}/api/v1/auth/me`, token)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    const refused = await getOnNewConnection(`${url}/api/v1/auth/me`, token);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).code).toBe('RATE_LIMITED');
  });
});
