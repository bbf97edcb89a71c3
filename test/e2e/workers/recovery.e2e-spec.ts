import { backends } from '../../support/backends.js';
import { eventually } from '../../support/eventually.js';
import { alive, startManager, type ManagerUnderTest } from '../../support/manager-under-test.js';

// A worker that does not start ends `failed`; worker-stop then worker-start for that id starts it again.
describe.each(backends())('a failed worker and its recovery (real processes, $name)', (backend) => {
  let manager: ManagerUnderTest;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    manager = await startManager({ httpWorkers: 1, env: { ...provisioned.env, MANAGER_MAX_RESTARTS: '1' } });
  }, 120_000);

  afterAll(async () => {
    await manager?.stop();
    await dispose?.();
  });

  it('marks a worker that keeps dying failed after MANAGER_MAX_RESTARTS, then worker-stop + worker-start recovers it', async () => {
    const http = async () =>
      (
        await manager.json<
          { worker_id: string; type: string; pid: number | null; port: number; state: string; restart_count: number }[]
        >('/api/workers')
      ).find((w) => w.type === 'http')!;
    const victim = await http();
    process.kill(victim.pid!, 'SIGKILL');
    const restarted = await eventually(http, (w) => w.state === 'running' && w.pid !== victim.pid, 20_000);
    expect(restarted).toMatchObject({ worker_id: victim.worker_id, port: victim.port, restart_count: 1 });
    process.kill(restarted.pid!, 'SIGKILL');
    const failed = await eventually(http, (w) => w.state === 'failed', 20_000);
    expect(failed).toMatchObject({ worker_id: victim.worker_id, state: 'failed', pid: null });
    expect((await manager.json('/api/health')).healthy).toBe(false);

    const stopped = await manager.tb(['workers', 'worker-stop', '-w', victim.worker_id]);
    expect(stopped.code).toBe(0);
    const started = await manager.tb(['workers', 'worker-start', '-t', 'http', '-w', victim.worker_id]);
    expect(started.code).toBe(0);
    const recovered = await http();
    expect(recovered).toMatchObject({
      worker_id: victim.worker_id,
      port: victim.port,
      state: 'running',
      restart_count: 0,
    });
    expect(alive(recovered.pid!)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${recovered.port}/health`)).status).toBe(200);
  }, 90_000);

  it('refuses to start an id that is running (409)', async () => {
    const [worker] = await manager.json<{ worker_id: string; type: string }[]>('/api/workers');
    const response = await manager.request('/api/workers/start', {
      body: { type: worker.type, worker_id: worker.worker_id },
    });
    expect(response.status).toBe(409);
  });
});
