import { rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { alive, freePortRange, startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';

interface Worker {
  worker_id: string;
  type: string;
  pid: number | null;
  node: string;
}

interface ClusterStatus {
  cluster: {
    nodes: number;
    healthy_nodes: number;
    members: { id: string; healthy: boolean; last_error: string | null; workers: Worker[] }[];
  };
}

const CLUSTER_SECRET = 'e2e-cluster-secret-0123456789abcdef';

/** Two real managers on this machine (own ports and data dirs): A joins B, A restarts, B is killed. */
describe.each(backends())('worker manager cluster on $name', (backend) => {
  let remote: ManagerUnderTest;
  let local: ManagerUnderTest;
  let dispose: () => Promise<void>;
  let remoteId: string;
  let remoteWorkers: Worker[];
  const keptDataDirs: string[] = [];

  const env = () => ({ CLUSTER_SECRET, MANAGER_CLUSTER_POLL_SECONDS: '0.3' });
  const status = () => local.json<ClusterStatus>('/api/status');

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    remote = await startManager({ httpWorkers: 2, env: { ...provisioned.env, ...env() } });
    local = await startManager({ httpWorkers: 1, env: { ...provisioned.env, ...env() } });
    remoteId = `127.0.0.1:${new URL(remote.api).port}`;
    remoteWorkers = await remote.json<Worker[]>('/api/workers');
  }, 180_000);

  afterAll(async () => {
    await local?.stop();
    await remote?.stop();
    await dispose?.();
    await Promise.all(keptDataDirs.map((dir) => rm(dirname(dir), { recursive: true, force: true })));
  });

  it('answers cluster/verify only to the shared secret', async () => {
    const ok = await remote.request('/admin/manager/api/cluster/verify');
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ok', instance: expect.any(String) });
    expect((await remote.request('/api/cluster/verify', { secret: 'not-it' })).status).toBe(403);
    expect((await remote.request('/api/cluster/verify', { secret: null })).status).toBe(401);
  });

  it('refuses a join with a wrong secret (403) and stores nothing', async () => {
    const port = Number(new URL(remote.api).port);
    const response = await local.request('/api/cluster/join', { body: { host: '127.0.0.1', port, secret: 'wrong' } });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { message: string }).message).toContain('rejected the secret');
    expect((await status()).cluster).toMatchObject({ nodes: 0, healthy_nodes: 0 });
    await expect(stat(join(local.env.DATA_DIR, 'cluster-nodes.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses an unreachable host with 502 naming it, and stores nothing', async () => {
    const port = await freePortRange(1);
    const response = await local.request('/api/cluster/join', { body: { host: '127.0.0.1', port } });
    expect(response.status).toBe(502);
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe('CLUSTER_NODE_UNREACHABLE');
    expect(body.message).toContain(`127.0.0.1:${port} does not answer`);
    expect((await status()).cluster.nodes).toBe(0);
  });

  it('rejects a join body without a valid port (400)', async () => {
    const response = await local.request('/api/cluster/join', { body: { host: '127.0.0.1', port: 70_000 } });
    expect(response.status).toBe(400);
  });

  it('joins the remote with `tb workers cluster-join` and shows its workers in status and workers', async () => {
    const joined = await local.tb([
      'workers',
      'cluster-join',
      '--host',
      '127.0.0.1',
      '--port',
      new URL(remote.api).port,
    ]);
    expect(joined.stderr).toBe('');
    expect(joined.stdout).toContain(`Joined ${remoteId} (healthy)`);
    expect(joined.code).toBe(0);
    const { cluster } = await status();
    expect(cluster).toMatchObject({ nodes: 1, healthy_nodes: 1 });
    expect(cluster.members[0].id).toBe(remoteId);
    expect(cluster.members[0].workers.map((w) => w.worker_id).sort()).toEqual(
      remoteWorkers.map((w) => w.worker_id).sort(),
    );
    const listed = await local.json<Worker[]>('/api/workers');
    const fromRemote = listed.filter((w) => w.node === remoteId).map((w) => w.worker_id);
    expect(fromRemote.sort()).toEqual(remoteWorkers.map((w) => w.worker_id).sort());
    expect(listed.filter((w) => w.node === 'local')).toHaveLength(2);
    const text = await local.tb(['workers', 'status']);
    expect(text.stdout).toContain('cluster 1/1 node(s) healthy');
    expect(text.stdout).toContain(`node ${remoteId}: healthy, 3 worker(s)`);
  });

  it('keeps the node in DATA_DIR (0600) across a restart of the joining manager', async () => {
    const file = join(local.env.DATA_DIR, 'cluster-nodes.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const dataDir = local.env.DATA_DIR;
    await local.stop({ keepData: true });
    keptDataDirs.push(dataDir);
    local = await startManager({
      httpWorkers: 1,
      env: { ...local.env, DATA_DIR: dataDir, HTTP_WORKER_PORT: String(await freePortRange(4)) },
    });
    const after = await eventually(status, (s) => s.cluster.healthy_nodes === 1, 15_000);
    expect(after.cluster).toMatchObject({ nodes: 1, healthy_nodes: 1 });
    expect(after.cluster.members[0]).toMatchObject({ id: remoteId, healthy: true });
    expect(after.cluster.members[0].workers).toHaveLength(3);
  }, 120_000);

  it('drops a killed node: healthy_nodes 0, its workers leave status and workers', async () => {
    const workerPids = remoteWorkers.map((w) => w.pid!);
    remote.process.child.kill('SIGKILL');
    await remote.process.exited;
    const after = await eventually(status, (s) => s.cluster.healthy_nodes === 0, 15_000);
    expect(after.cluster).toMatchObject({ nodes: 1, healthy_nodes: 0 });
    expect(after.cluster.members[0].workers).toEqual([]);
    expect(after.cluster.members[0].last_error).toContain('does not answer');
    expect((await local.json<Worker[]>('/api/workers')).filter((w) => w.node !== 'local')).toEqual([]);
    // The killed manager's workers followed it (their IPC channel closed): no orphan.
    const gone = await eventually(
      async () => workerPids.filter(alive),
      (left) => left.length === 0,
      15_000,
    );
    expect(gone).toEqual([]);
  }, 60_000);

  it('leaves a node with `tb workers cluster-leave` (DELETE cluster/nodes/{id}); an unknown node is 404', async () => {
    const left = await local.tb(['workers', 'cluster-leave', '--node', remoteId]);
    expect(left.stdout).toContain(`Left ${remoteId}.`);
    expect(left.code).toBe(0);
    expect((await status()).cluster).toMatchObject({ nodes: 0, healthy_nodes: 0 });
    const again = await local.request(`/api/cluster/nodes/${encodeURIComponent(remoteId)}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
  });
});
