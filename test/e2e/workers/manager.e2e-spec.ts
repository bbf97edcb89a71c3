import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSourcesFor, runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { freePortRange } from '../../support/free-ports.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';

interface StatusWorker {
  worker_id: string;
  type: string;
  pid: number | null;
  port: number;
  state: string;
  healthy: boolean;
  restart_count: number;
}

/** Retries `check` (which throws while its expectation fails) until it passes or `timeoutMs` runs out. */
async function until<T>(check: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The embedded broker (IPC relayed by the manager), and Redis pub/sub when TEST_REDIS_URL is set.
const brokers: Array<[string, Record<string, string>]> = [['ipc', {}]];
if (process.env.TEST_REDIS_URL)
  brokers.push(['redis', { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_PREFIX: `tb-manager-${process.pid}-` }]);

describe.each(brokers)('tb workers start (real processes, %s broker)', (_broker, brokerEnv) => {
  let main: string;
  let root: string;
  let env: Record<string, string>;
  let manager: TbProcess;

  const status = async (): Promise<StatusWorker[]> => {
    const result = await runTb(main, ['workers', 'status', '--json'], env);
    expect(result.code).toBe(0);
    return Object.values((JSON.parse(result.stdout) as { workers: Record<string, StatusWorker> }).workers);
  };
  const health = async (port: number) => (await fetch(`http://127.0.0.1:${port}/health`)).status;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tb-manager-'));
    main = await compileSourcesFor(join(root, 'build'));
    const httpBase = await freePortRange(2);
    const wsBase = await freePortRange(1);
    env = {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: join(root, 'data'),
      HTTP_WORKERS: '2',
      HTTP_WORKER_PORT: String(httpBase),
      WS_WORKER_PORT: String(wsBase),
      MANAGER_PORT: '0',
      NGINX_BIN: '/nonexistent/nginx',
      MANAGER_HEALTH_INTERVAL_SECONDS: '0.3',
      MANAGER_RESTART_DELAY_SECONDS: '0.5',
      DRAIN_TIMEOUT_SECONDS: '2',
      LOG_FORMAT: 'json',
      ...brokerEnv,
    };
    manager = startTb(main, ['workers', 'start', '--no-ui'], env);
    await manager.line((line) => line.startsWith('Worker manager ready'), 90_000);
  }, 120_000);

  afterAll(async () => {
    if (manager) {
      manager.child.kill('SIGKILL');
      await manager.exited;
    }
    await rm(root, { recursive: true, force: true });
  });

  it('runs N HTTP workers and one WS worker on the pre-allocated ports, healthy, with a 0600 state file', async () => {
    const workers = await status();
    expect(workers.map((w) => w.type).sort()).toEqual(['http', 'http', 'ws']);
    const http = workers.filter((w) => w.type === 'http').sort((a, b) => a.port - b.port);
    expect(http.map((w) => w.port)).toEqual([Number(env.HTTP_WORKER_PORT), Number(env.HTTP_WORKER_PORT) + 1]);
    expect(workers.find((w) => w.type === 'ws')!.port).toBe(Number(env.WS_WORKER_PORT));
    for (const worker of workers) {
      expect(worker.worker_id).toMatch(new RegExp(`^${worker.type}_[0-9a-f]{8}$`));
      expect(worker).toMatchObject({ state: 'running', healthy: true, restart_count: 0 });
      expect(alive(worker.pid!)).toBe(true);
      expect(await health(worker.port)).toBe(200);
    }
    expect((await stat(join(env.DATA_DIR, 'manager.json'))).mode & 0o777).toBe(0o600);
  });

  it('a second start says the manager runs and exits 0', async () => {
    const second = await runTb(main, ['workers', 'start'], env);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`already running (pid ${manager.child.pid}`);
  });

  it('restarts a killed worker with the same id and port', async () => {
    const [victim] = (await status()).filter((w) => w.type === 'http');
    process.kill(victim.pid!, 'SIGKILL');
    const restarted = await until(async () => {
      const now = (await status()).find((w) => w.worker_id === victim.worker_id)!;
      expect(now).toMatchObject({ state: 'running', healthy: true, port: victim.port, restart_count: 1 });
      expect(now.pid).not.toBe(victim.pid);
      return now;
    }, 30_000);
    expect(await health(restarted.port)).toBe(200);
  }, 40_000);

  it('tb workers stop stops the manager and every worker: no orphan, no state file', async () => {
    const pids = (await status()).map((w) => w.pid!);
    expect(pids.every(alive)).toBe(true);
    const stopped = await runTb(main, ['workers', 'stop'], env);
    expect(stopped.code).toBe(0);
    expect(await manager.exited).toBe(0);
    await until(async () => expect(pids.filter(alive)).toEqual([]), 10_000);
    await expect(stat(join(env.DATA_DIR, 'manager.json'))).rejects.toThrow();
    const after = await runTb(main, ['workers', 'status'], env);
    expect(after.code).toBe(1);
  }, 40_000);
});
