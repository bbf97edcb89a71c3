import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { alive, startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';

interface Worker {
  worker_id: string;
  type: string;
  pid: number | null;
  port: number;
  state: string;
  healthy: boolean;
  restart_count: number;
  node: string;
  metrics: { requests: number };
}

const bodyOf = (response: Response): Promise<any> => response.json();

const ROUTES: [string, string][] = [
  ['GET', 'status'],
  ['GET', 'health'],
  ['GET', 'metrics'],
  ['GET', 'workers'],
  ['POST', 'scale'],
  ['POST', 'rolling-update'],
  ['POST', 'restart'],
  ['POST', 'shutdown'],
  ['POST', 'workers/start'],
  ['POST', 'workers/stop'],
  ['POST', 'workers/restart'],
  ['POST', 'nginx/reload'],
  ['GET', 'cluster/verify'],
  ['GET', 'cluster/services'],
  ['POST', 'cluster/join'],
  ['GET', 'cluster/nodes'],
  ['DELETE', 'cluster/nodes/127.0.0.1:9'],
];

describe.each(backends())('worker manager admin API on $name', (backend) => {
  let manager: ManagerUnderTest;
  let dispose: () => Promise<void>;

  const workers = () => manager.json<Worker[]>('/api/workers');
  const http = async () => (await workers()).filter((w) => w.type === 'http' && w.state !== 'stopped');

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    manager = await startManager({ httpWorkers: 2, httpSlots: 4, env: provisioned.env });
  }, 120_000);

  afterAll(async () => {
    await manager?.stop();
    await dispose?.();
  });

  it.each(ROUTES)('%s %s: 401 without X-Cluster-Secret, 403 with a wrong one (both prefixes)', async (method, path) => {
    for (const prefix of ['/api/', '/admin/manager/api/']) {
      const none = await manager.request(`${prefix}${path}`, { method, secret: null });
      expect(none.status).toBe(401);
      expect(await bodyOf(none)).toMatchObject({ code: 'UNAUTHORIZED' });
      const wrong = await manager.request(`${prefix}${path}`, { method, secret: `${manager.secret}x` });
      expect(wrong.status).toBe(403);
      expect(await bodyOf(wrong)).toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('answers status with workers keyed by id, broker, nginx and cluster facts, under both prefixes', async () => {
    const status = await manager.json('/admin/manager/api/status');
    const ids = Object.keys(status.workers);
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(status.workers[id]).toMatchObject({ worker_id: id, healthy: true, state: 'running' });
    expect(status).toMatchObject({
      running: true,
      broker_alive: true,
      nginx: { installed: false, configured: false },
      cluster: { nodes: 0, healthy_nodes: 0 },
      port_slots: { http: [manager.httpBase, manager.httpBase + 1, manager.httpBase + 2, manager.httpBase + 3] },
    });
    expect((await manager.json('/api/health')).healthy).toBe(true);
  });

  it('collects each worker’s metrics', async () => {
    const [first] = await http();
    for (let i = 0; i < 5; i++) expect((await fetch(`http://127.0.0.1:${first.port}/api/ping`)).status).toBe(200);
    const counted = await eventually(
      async () => (await workers()).find((w) => w.worker_id === first.worker_id)!.metrics.requests,
      (requests) => requests >= 5,
      10_000,
    );
    expect(counted).toBeGreaterThanOrEqual(5);
    const totals = await manager.json('/api/metrics');
    expect(totals).toMatchObject({ total_workers: 3, http_workers: 2, ws_workers: 1 });
    expect(totals.total_requests).toBeGreaterThanOrEqual(5);
  });

  it('refuses bad bodies with 400 and the field problems, changing nothing', async () => {
    const before = (await http()).map((w) => w.worker_id).sort();
    for (const body of [{ type: 'tcp', count: 1 }, { type: 'http', count: -1 }, { type: 'http', count: 'two' }, {}]) {
      const response = await manager.request('/api/scale', { body });
      expect(response.status).toBe(400);
      expect(await bodyOf(response)).toMatchObject({ code: 'BAD_REQUEST', errors: expect.any(Array) });
    }
    const malformed = await manager.request('/api/scale', { body: '{"type":' });
    expect(malformed.status).toBe(400);
    const badId = await manager.request('/api/workers/stop', { body: { worker_id: '../etc' } });
    expect(badId.status).toBe(400);
    expect((await http()).map((w) => w.worker_id).sort()).toEqual(before);
  });

  it('answers 404 for an unknown worker', async () => {
    const response = await manager.request('/api/workers/restart', { body: { worker_id: 'http_00000000' } });
    expect(response.status).toBe(404);
    expect(await bodyOf(response)).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('scales up within the pre-allocated ports: the new workers serve at once', async () => {
    const result = await manager.json('/api/scale', { body: { type: 'http', count: 4 } });
    expect(result).toMatchObject({ status: 'ok', stopped: [] });
    expect(result.started).toHaveLength(2);
    const now = await http();
    expect(now.map((w) => w.port).sort()).toEqual([0, 1, 2, 3].map((i) => manager.httpBase + i));
    for (const worker of now.filter((w) => result.started.includes(w.worker_id))) {
      expect(worker.state).toBe('running');
      expect((await fetch(`http://127.0.0.1:${worker.port}/health`)).status).toBe(200);
    }
  });

  it('refuses to scale beyond the pre-allocated ports with 409 naming the fix', async () => {
    const response = await manager.request('/api/scale', { body: { type: 'http', count: 5 } });
    expect(response.status).toBe(409);
    const body = await bodyOf(response);
    expect(body.code).toBe('PORT_RANGE_EXHAUSTED');
    expect(body.message).toContain('MANAGER_HTTP_PORT_SLOTS');
    expect(body.message).toContain('nginx-config --force');
    expect(body.message).toContain('nginx-reload');
    const start = await manager.request('/api/workers/start', { body: { type: 'http' } });
    expect(start.status).toBe(409);
    expect((await http()).length).toBe(4);
  });

  it('scales down: the retired workers drain and their processes are gone', async () => {
    const before = await http();
    const result = await manager.json('/api/scale', { body: { type: 'http', count: 1 } });
    expect(result.stopped).toHaveLength(3);
    const after = await http();
    expect(after).toHaveLength(1);
    for (const worker of before.filter((w) => result.stopped.includes(w.worker_id)))
      await eventually(
        async () => alive(worker.pid!),
        (running) => !running,
      );
  }, 60_000);

  it('starts, stops and restarts single workers; a stopped id starts again on its port', async () => {
    const [started] = (await manager.json('/api/workers/start', { body: { type: 'http' } })).workers;
    expect(started).toMatchObject({ state: 'running', healthy: true });
    const stopped = await manager.json('/api/workers/stop', { body: { worker_id: started.worker_id } });
    expect(stopped.worker).toMatchObject({ state: 'stopped', pid: null });
    expect(alive(started.pid)).toBe(false);
    const again = await manager.json('/api/workers/start', { body: { type: 'http', worker_id: started.worker_id } });
    expect(again.workers[0]).toMatchObject({ worker_id: started.worker_id, port: started.port, state: 'running' });
    const restarted = await manager.json('/api/workers/restart', { body: { worker_id: started.worker_id } });
    expect(restarted.worker).toMatchObject({ worker_id: started.worker_id, port: started.port, state: 'running' });
    expect(restarted.worker.pid).not.toBe(again.workers[0].pid);
  }, 60_000);

  it('replaces every HTTP worker in a rolling update; a second one meanwhile is refused', async () => {
    const before = await http();
    const accepted = await manager.request('/api/rolling-update', { method: 'POST' });
    expect(accepted.status).toBe(202);
    const { rolling_update } = await bodyOf(accepted);
    expect(rolling_update).toMatchObject({ state: 'running', total: before.length });
    expect((await manager.request('/api/rolling-update', { method: 'POST' })).status).toBe(409);
    const finished = await eventually(
      async () => (await manager.json('/api/status')).rolling_update,
      (update) => update.state !== 'running',
      60_000,
    );
    expect(finished).toMatchObject({ state: 'done', done: before.length, errors: [] });
    const after = await http();
    expect(after.map((w) => w.worker_id).sort()).toEqual(
      finished.replaced.map((pair: { new: string }) => pair.new).sort(),
    );
    for (const old of before) expect(alive(old.pid!)).toBe(false);
    for (const worker of after) expect((await fetch(`http://127.0.0.1:${worker.port}/health`)).status).toBe(200);
  }, 90_000);

  it('the CLI acts on the running manager: status --json, worker-start, worker-stop, update', async () => {
    const status = await manager.tb(['workers', 'status', '--json']);
    expect(status.code).toBe(0);
    expect(Object.keys(JSON.parse(status.stdout).workers).length).toBeGreaterThan(0);
    const started = await manager.tb(['workers', 'worker-start', '-t', 'http', '--json']);
    expect(started.code).toBe(0);
    const id = JSON.parse(started.stdout).workers[0].worker_id as string;
    const stopped = await manager.tb(['workers', 'worker-stop', '-w', id]);
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain(`Stopped ${id}`);
    const update = await manager.tb(['workers', 'update']);
    expect(update.code).toBe(0);
    expect(update.stdout).toMatch(/Rolling update ru_[0-9a-f]{8}: done/);
    const text = await manager.tb(['workers', 'status']);
    expect(text.stdout).toContain('broker');
  }, 90_000);

  it('documents the admin API with OpenAPI and Swagger UI', async () => {
    expect((await fetch(`${manager.api}/api/docs`)).status).toBe(200);
    const document = await bodyOf(await fetch(`${manager.api}/api/docs-json`));
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/status', '/api/scale', '/api/rolling-update', '/admin/manager/api/workers']),
    );
    expect(document.components.securitySchemes.cluster_secret).toMatchObject({
      in: 'header',
      name: 'X-Cluster-Secret',
    });
    expect(document.paths['/api/scale'].post.responses['409']).toBeDefined();
  });

  it('shuts down on POST shutdown: every worker drains and no child process is left', async () => {
    const pids = (await workers()).filter((w) => w.pid).map((w) => w.pid!);
    expect(pids.length).toBeGreaterThan(0);
    const response = await manager.request('/api/shutdown', { method: 'POST' });
    expect(response.status).toBe(202);
    expect(await manager.process.exited).toBe(0);
    await eventually(
      async () => pids.filter(alive),
      (left) => left.length === 0,
    );
    expect(alive(manager.pid)).toBe(false);
  }, 60_000);
});
