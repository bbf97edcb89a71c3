import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { backends } from '../../support/backends.js';
import { compileSourcesFor, runTb, startTb, type TbProcess } from '../../support/child-processes.js';
import { freePortRange } from '../../support/free-ports.js';
import { TEST_SECRET } from '../../support/registry-under-test.js';

interface StatusWorker {
  worker_id: string;
  type: string;
  pid: number | null;
  state: string;
}

/** A process's environment as the kernel holds it (Linux): what it was started with. */
async function environmentOf(pid: number): Promise<Record<string, string>> {
  const raw = await readFile(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  );
}

/**
 * Several workers started at once on a new database each ran the migrations and raced (on MySQL two of them
 * creating the same table). The manager migrates once, before it starts any worker, and its workers skip it.
 */
describe.each(backends())('tb workers start migrates the database once ($name)', (backend) => {
  let main: string;
  let root: string;
  let env: Record<string, string>;
  let manager: TbProcess;
  let dispose: () => Promise<void>;

  const workers = async (): Promise<StatusWorker[]> => {
    const result = await runTb(main, ['workers', 'status', '--json'], env);
    expect(result.code).toBe(0);
    return Object.values((JSON.parse(result.stdout) as { workers: Record<string, StatusWorker> }).workers).filter(
      (worker) => worker.state === 'running',
    );
  };
  const migrationLines = () =>
    manager
      .stdout()
      .split('\n')
      .filter((line) => line.includes('database migrated once'));

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'tb-manager-migrations-'));
    main = await compileSourcesFor(join(root, 'build'));
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    env = {
      PLATFORM_JWT_SECRET: TEST_SECRET,
      DATA_DIR: join(root, 'data'),
      HTTP_WORKERS: '4',
      HTTP_WORKER_PORT: String(await freePortRange(8)),
      WS_WORKER_PORT: String(await freePortRange(4)),
      MANAGER_PORT: '0',
      NGINX_BIN: '/nonexistent/nginx',
      MANAGER_ROLLING_WAIT_SECONDS: '0',
      DRAIN_TIMEOUT_SECONDS: '2',
      LOG_FORMAT: 'json',
      ...provisioned.env,
    };
    manager = startTb(main, ['workers', 'start', '--no-ui'], env);
    await manager.line((line) => line.startsWith('Worker manager ready'), 120_000);
  }, 180_000);

  afterAll(async () => {
    if (manager) {
      manager.child.kill('SIGTERM');
      await manager.exited;
    }
    await dispose?.();
    await rm(root, { recursive: true, force: true });
  });

  it('migrates the new database before the first worker starts, once', async () => {
    const lines = manager.stdout().split('\n');
    const migrated = lines.findIndex((line) => line.includes('database migrated once'));
    const firstReady = lines.findIndex((line) => line.includes('worker-ready'));
    expect(migrated).toBeGreaterThanOrEqual(0);
    expect(firstReady).toBeGreaterThan(migrated);
    expect(migrationLines()).toHaveLength(1);
    expect(migrationLines()[0]).toContain('applied ');
    const status = await runTb(main, ['db', 'status'], env);
    expect(status.stdout).toContain('up to date');
  });

  it('starts every worker with RUN_MIGRATIONS=false, so none of them migrates', async () => {
    const running = await workers();
    expect(running.map((worker) => worker.type).sort()).toEqual(['http', 'http', 'http', 'http', 'ws']);
    for (const worker of running) expect((await environmentOf(worker.pid!)).RUN_MIGRATIONS).toBe('false');
  });

  const updateReplacesEveryHttpWorker = async () => {
    const before = (await workers()).filter((worker) => worker.type === 'http').map((worker) => worker.worker_id);
    const update = await runTb(main, ['workers', 'update'], env);
    expect(update.code).toBe(0);
    const after = (await workers()).filter((worker) => worker.type === 'http');
    expect(after).toHaveLength(4);
    expect(after.filter((worker) => before.includes(worker.worker_id))).toEqual([]);
    for (const worker of after) expect((await environmentOf(worker.pid!)).RUN_MIGRATIONS).toBe('false');
  };

  it('a rolling update with the same migration list on disk starts no migration process', async () => {
    await updateReplacesEveryHttpWorker();
    expect(migrationLines()).toHaveLength(1);
    expect(manager.stdout()).toContain('migration list unchanged since the database was migrated');
  }, 120_000);

  it('a rolling update after a deploy that changed the migration list migrates once before its new workers start', async () => {
    // What a deploy does to the code on disk: the manager itself keeps running the modules it loaded.
    const list = join(dirname(main), 'database', 'migrations', 'index.js');
    await appendFile(list, '\n// deployed\n');
    await updateReplacesEveryHttpWorker();
    expect(migrationLines()).toHaveLength(2);
    expect(migrationLines()[1]).toContain('no pending migrations');
    const lines = manager.stdout().split('\n');
    const migrated = lines.findIndex((line) => line === migrationLines()[1]);
    expect(lines.slice(0, migrated).filter((line) => line.includes('worker-ready'))).toHaveLength(5 + 4);
  }, 120_000);
});
