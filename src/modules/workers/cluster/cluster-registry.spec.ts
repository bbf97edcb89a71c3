import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupServer } from '../manager-hooks.js';
import { ClusterRegistry } from './cluster-registry.js';

const OWN = 'own-secret-0123456789abcdef0123456789';

interface FakeWorker {
  worker_id: string;
  type: 'http' | 'ws';
  port: number;
  state: string;
  healthy: boolean;
  node: string;
}

/** A remote manager as its admin API answers: secret, instance, workers; `down` = connection refused. */
interface FakeNode {
  secret: string;
  instance: string;
  workers: FakeWorker[];
  down?: boolean;
  /** What `GET cluster/services` answers; absent: a manager without the route (404). */
  services?: { registry: { host: string; port: number }; mcp: { host: string; port: number } };
}

function fakeNetwork(nodes: Record<string, FakeNode>) {
  const calls: { url: string; secret: string | null }[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const secret = new Headers(init?.headers).get('x-cluster-secret');
    calls.push({ url: url.href, secret });
    const node = nodes[url.host];
    if (!node || node.down) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    if (!secret) return Response.json({ code: 'UNAUTHORIZED' }, { status: 401 });
    if (secret !== node.secret) return Response.json({ code: 'FORBIDDEN' }, { status: 403 });
    if (url.pathname === '/api/cluster/verify') return Response.json({ status: 'ok', instance: node.instance });
    if (url.pathname === '/api/workers') return Response.json(node.workers);
    if (url.pathname === '/api/cluster/services' && node.services) return Response.json(node.services);
    return Response.json({ code: 'NOT_FOUND' }, { status: 404 });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const worker = (port: number, overrides: Partial<FakeWorker> = {}): FakeWorker => ({
  worker_id: `http_${port}`,
  type: 'http',
  port,
  state: 'running',
  healthy: true,
  node: 'local',
  ...overrides,
});

describe('ClusterRegistry', () => {
  let dir: string;
  let file: string;
  let backups: BackupServer[][];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cluster-registry-'));
    file = join(dir, 'cluster-nodes.json');
    backups = [];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const registry = (network: ReturnType<typeof fakeNetwork>) =>
    new ClusterRegistry({
      filePath: file,
      ownSecret: OWN,
      fetch: network.fetch,
      now: () => new Date('2026-01-01T00:00:00Z'),
      onBackupsChanged: (servers) => backups.push(servers),
    });

  it('joins a node that accepts the shared secret, stores it 0600 and lists its workers tagged with the node', async () => {
    const network = fakeNetwork({ '10.0.0.2:9005': { secret: OWN, instance: 'b', workers: [worker(8000)] } });
    const cluster = registry(network);
    const node = await cluster.join({ host: '10.0.0.2', port: 9005 });
    expect(node).toMatchObject({ id: '10.0.0.2:9005', healthy: true, last_seen: '2026-01-01T00:00:00.000Z' });
    expect(network.calls[0]).toEqual({ url: 'http://10.0.0.2:9005/api/cluster/verify', secret: OWN });
    expect(cluster.summary()).toMatchObject({ nodes: 1, healthy_nodes: 1 });
    expect(cluster.remoteWorkers()).toEqual([
      expect.objectContaining({ worker_id: 'http_8000', node: '10.0.0.2:9005' }),
    ]);
    const stored = JSON.parse(await readFile(file, 'utf8'));
    expect(stored.nodes).toEqual([expect.objectContaining({ id: '10.0.0.2:9005', secret: null })]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('sends a node’s own secret when one was given, and keeps it for the polls', async () => {
    const network = fakeNetwork({ 'b:9005': { secret: 'theirs', instance: 'b', workers: [] } });
    const cluster = registry(network);
    await cluster.join({ host: 'b', port: 9005, secret: 'theirs' });
    await cluster.pollAll();
    expect(network.calls.map((call) => `${new URL(call.url).pathname} ${call.secret}`)).toEqual([
      '/api/cluster/verify theirs',
      '/api/workers theirs',
      '/api/cluster/services theirs',
      '/api/workers theirs',
      '/api/cluster/services theirs',
    ]);
    expect(JSON.parse(await readFile(file, 'utf8')).nodes[0].secret).toBe('theirs');
  });

  it('refuses a node that rejects the secret (403) and stores nothing', async () => {
    const cluster = registry(fakeNetwork({ 'b:9005': { secret: 'other', instance: 'b', workers: [] } }));
    await expect(cluster.join({ host: 'b', port: 9005 })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(cluster.summary().nodes).toBe(0);
    await expect(stat(file)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an unreachable node with a clear error and stores nothing', async () => {
    const cluster = registry(fakeNetwork({}));
    const error = await cluster.join({ host: 'nowhere', port: 9005 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'CLUSTER_NODE_UNREACHABLE' });
    expect((error as Error).message).toContain('nowhere:9005 does not answer (ECONNREFUSED)');
    expect(cluster.summary().nodes).toBe(0);
  });

  it('refuses to join itself', async () => {
    const nodes: Record<string, FakeNode> = {};
    const cluster = registry(fakeNetwork(nodes));
    nodes['me:9005'] = { secret: OWN, instance: cluster.instance, workers: [] };
    await expect(cluster.join({ host: 'me', port: 9005 })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(cluster.summary().nodes).toBe(0);
  });

  it('offers only healthy, running HTTP workers of the node itself as backups, at the node’s host', async () => {
    const workers = [
      worker(8000),
      worker(8001, { healthy: false }),
      worker(8002, { state: 'draining' }),
      worker(8100, { type: 'ws' }),
      worker(8003, { node: '10.0.0.9:9005' }),
    ];
    const cluster = registry(fakeNetwork({ '10.0.0.2:9005': { secret: OWN, instance: 'b', workers } }));
    await cluster.join({ host: '10.0.0.2', port: 9005 });
    expect(cluster.backups()).toEqual([{ host: '10.0.0.2', port: 8000 }]);
    expect(backups).toEqual([[{ host: '10.0.0.2', port: 8000 }]]);
    expect(cluster.remoteWorkers().map((w) => w.worker_id)).not.toContain('http_8003');
  });

  it('offers the node’s registry and MCP transport as backups of their upstreams, at the node’s host', async () => {
    const services = { registry: { host: '0.0.0.0', port: 4025 }, mcp: { host: '0.0.0.0', port: 8765 } };
    const cluster = registry(
      fakeNetwork({ '10.0.0.2:9005': { secret: OWN, instance: 'b', workers: [worker(8000)], services } }),
    );
    await cluster.join({ host: '10.0.0.2', port: 9005 });
    expect(cluster.backups()).toEqual([
      { host: '10.0.0.2', port: 8000 },
      { host: '10.0.0.2', port: 8765, service: 'mcp' },
      { host: '10.0.0.2', port: 4025, service: 'registry' },
    ]);
  });

  it('leaves out a service that listens on loopback only when the node was joined by another address', async () => {
    const services = { registry: { host: '0.0.0.0', port: 4025 }, mcp: { host: '127.0.0.1', port: 8765 } };
    const cluster = registry(fakeNetwork({ '10.0.0.2:9005': { secret: OWN, instance: 'b', workers: [], services } }));
    await cluster.join({ host: '10.0.0.2', port: 9005 });
    expect(cluster.backups()).toEqual([{ host: '10.0.0.2', port: 4025, service: 'registry' }]);
  });

  it('drops a dead node’s registry and MCP backups with its workers', async () => {
    const services = { registry: { host: '0.0.0.0', port: 4025 }, mcp: { host: '0.0.0.0', port: 8765 } };
    const node: FakeNode = { secret: OWN, instance: 'b', workers: [], services };
    const cluster = registry(fakeNetwork({ 'b:9005': node }));
    await cluster.join({ host: 'b', port: 9005 });
    expect(backups.at(-1)).toHaveLength(2);
    node.down = true;
    await cluster.pollAll();
    expect(backups.at(-1)).toEqual([]);
  });

  it('marks a node that stops answering unhealthy, drops its workers and backups, and takes it back later', async () => {
    const node: FakeNode = { secret: OWN, instance: 'b', workers: [worker(8000), worker(8001)] };
    const cluster = registry(fakeNetwork({ 'b:9005': node }));
    await cluster.join({ host: 'b', port: 9005 });
    node.down = true;
    await cluster.pollAll();
    expect(cluster.summary()).toMatchObject({ nodes: 1, healthy_nodes: 0 });
    expect(cluster.nodes()[0].last_error).toContain('does not answer');
    expect(cluster.remoteWorkers()).toEqual([]);
    expect(backups.at(-1)).toEqual([]);
    node.down = false;
    await cluster.pollAll();
    expect(cluster.summary().healthy_nodes).toBe(1);
    expect(backups.at(-1)).toHaveLength(2);
  });

  it('publishes backups only when they change', async () => {
    const cluster = registry(fakeNetwork({ 'b:9005': { secret: OWN, instance: 'b', workers: [worker(8000)] } }));
    await cluster.join({ host: 'b', port: 9005 });
    await cluster.pollAll();
    await cluster.pollAll();
    expect(backups).toHaveLength(1);
  });

  it('keeps nodes across a restart (unhealthy until the first poll) and can leave them', async () => {
    const network = fakeNetwork({ 'b:9005': { secret: OWN, instance: 'b', workers: [worker(8000)] } });
    await registry(network).join({ host: 'b', port: 9005 });
    const restarted = registry(network);
    await restarted.load();
    expect(restarted.summary()).toMatchObject({ nodes: 1, healthy_nodes: 0 });
    await restarted.pollAll();
    expect(restarted.summary().healthy_nodes).toBe(1);
    await restarted.leave('b:9005');
    expect(restarted.summary().nodes).toBe(0);
    expect(backups.at(-1)).toEqual([]);
    expect(JSON.parse(await readFile(file, 'utf8')).nodes).toEqual([]);
    await expect(restarted.leave('b:9005')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('fails loudly on a damaged node file instead of forgetting the cluster', async () => {
    await writeFile(file, '{"nodes": 3');
    await expect(registry(fakeNetwork({})).load()).rejects.toThrow('is not a cluster node list');
  });

  it('joins and polls an IPv6 node with a bracketed URL', async () => {
    const network = fakeNetwork({ '[::1]:9005': { secret: OWN, instance: 'b', workers: [] } });
    const node = await registry(network).join({ host: '::1', port: 9005 });
    expect(node.id).toBe('[::1]:9005');
    expect(network.calls[0].url).toBe('http://[::1]:9005/api/cluster/verify');
  });
});
