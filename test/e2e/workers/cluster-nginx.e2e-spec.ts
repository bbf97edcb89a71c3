import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';
import { startManagerBehindNginx, type NginxUnderTest } from '../../support/nginx-under-test.js';

interface Worker {
  worker_id: string;
  type: string;
  port: number;
  state: string;
}

const CLUSTER_SECRET = 'e2e-cluster-secret-0123456789abcdef';

/**
 * A manager behind a real nginx joins a second manager: the second's healthy HTTP worker becomes a `backup`
 * server of the upstream and takes the traffic when no local worker is left; once the second dies it leaves.
 */
describe.each(backends())('cluster backups in a real nginx ($name)', (backend) => {
  let nginx: NginxUnderTest;
  let remote: ManagerUnderTest;
  let local: ManagerUnderTest;
  let dispose: () => Promise<void>;
  let remoteWorker: Worker;

  const site = () => readFile(join(nginx.confDir, 'box-available', 'toolbox'), 'utf8');
  const backupLine = () => `server 127.0.0.1:${remoteWorker.port} max_fails=1 fail_timeout=5s backup;`;
  const servedBy = async () => {
    const response = await fetch(`${nginx.url}/health`);
    return response.status === 200 ? ((await response.json()) as { worker_id: string }).worker_id : response.status;
  };

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    const cluster = { CLUSTER_SECRET, MANAGER_CLUSTER_POLL_SECONDS: '0.3' };
    remote = await startManager({ httpWorkers: 1, env: { ...provisioned.env, ...cluster } });
    remoteWorker = (await remote.json<Worker[]>('/api/workers')).find((w) => w.type === 'http')!;
    ({ nginx, manager: local } = await startManagerBehindNginx({ env: { ...provisioned.env, ...cluster } }));
  }, 240_000);

  afterAll(async () => {
    await local?.stop();
    await remote?.stop();
    await nginx?.stop();
    await dispose?.();
  });

  it('lists the joined node’s healthy HTTP worker as a backup server and reloads nginx', async () => {
    expect(await site()).not.toContain('backup;');
    const nginxWorkers = await nginx.workerPids();
    await local.json('/api/cluster/join', { body: { host: '127.0.0.1', port: Number(new URL(remote.api).port) } });
    const text = await eventually(site, (config) => config.includes(backupLine()), 10_000);
    expect(text).toContain(backupLine());
    // The file changed, so nginx was reloaded: none of its worker processes is left.
    const reloaded = await eventually(
      () => nginx.workerPids(),
      (pids) => pids.length > 0 && pids.every((pid) => !nginxWorkers.includes(pid)),
      10_000,
    );
    expect(reloaded.length).toBeGreaterThan(0);
    expect(reloaded.filter((pid) => nginxWorkers.includes(pid))).toEqual([]);
  });

  it('sends the traffic to the backup once no local HTTP worker is left', async () => {
    const [own] = (await local.json<Worker[]>('/api/workers')).filter(
      (w) => w.type === 'http' && w.state === 'running',
    );
    expect(await servedBy()).toBe(own.worker_id);
    await local.json('/api/workers/stop', { body: { worker_id: own.worker_id } });
    const statuses: (string | number)[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await servedBy());
    expect(statuses).toEqual(Array(10).fill(remoteWorker.worker_id));
  }, 60_000);

  it('drops the backup when the node dies', async () => {
    remote.process.child.kill('SIGKILL');
    await remote.process.exited;
    const text = await eventually(site, (config) => !config.includes('backup;'), 15_000);
    expect(text).not.toContain('backup;');
    expect((await local.json('/api/status')).cluster).toMatchObject({ nodes: 1, healthy_nodes: 0 });
  }, 30_000);
});
