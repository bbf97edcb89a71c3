import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import type { PlatformConfig } from '../../config/config.js';
import { forkLauncher } from '../../supervisor/index.js';
import {
  WorkerManager,
  newWorkerId,
  type HealthProbeResult,
  type WorkerManagerEvent,
  type WorkerRecord,
  type WorkerSpec,
} from './worker-manager.js';

/** What `DATA_DIR/manager.json` (mode 0600) holds: how the other `tb workers` commands find the manager. */
export interface ManagerStateFile {
  pid: number;
  started_at: string;
  /** The admin API's address once it listens (null while it does not). */
  api: string | null;
  /** The manager secret (X-Cluster-Secret); the file is readable by its owner only. */
  secret: string;
  updated_at: string;
  workers: WorkerRecord[];
}

export function managerStatePath(config: PlatformConfig): string {
  return join(config.dataDir, 'manager.json');
}

export async function readManagerState(config: PlatformConfig): Promise<ManagerStateFile | null> {
  try {
    return JSON.parse(await readFile(managerStatePath(config), 'utf8')) as ManagerStateFile;
  } catch {
    return null;
  }
}

/** True when a process with this pid exists (signal 0). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running manager of this data directory, or null (no state file, or its process is gone). */
export async function runningManager(config: PlatformConfig): Promise<ManagerStateFile | null> {
  const state = await readManagerState(config);
  return state && processAlive(state.pid) ? state : null;
}

/** `GET http://127.0.0.1:PORT/health` = 200 within `timeoutMs` (seed: 2 s), the latency measured. */
export function probeHealth(host: string, port: number, timeoutMs = 2_000): Promise<HealthProbeResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (ok: boolean, error?: string) => resolve({ ok, latencyMs: performance.now() - started, error });
    const req = request({ host, port, path: '/health', method: 'GET', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      res.once('end', () =>
        done(res.statusCode === 200, res.statusCode === 200 ? undefined : `HTTP ${res.statusCode}`),
      );
      res.once('error', (error) => done(false, error.message));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', (error) => done(false, error.message));
    req.end();
  });
}

export interface ManagerProcessOptions {
  /** The `tb` entry script the workers run (`process.argv[1]`) and its Node options (`process.execArgv`). */
  entry: string;
  execArgv: readonly string[];
  /** The environment each worker inherits (the manager's). */
  env: NodeJS.ProcessEnv;
  log(line: string): void;
}

/**
 * The `tb workers start` process: N HTTP workers on `HTTP_WORKER_PORT`…, one WS worker on `WS_WORKER_PORT`,
 * the health checker, and the state file kept current. Broker: Redis when `REDIS_URL` is set (the workers
 * reach it themselves), else the manager relays IPC between its children.
 */
export class ManagerProcess {
  readonly manager: WorkerManager;
  readonly secret = randomBytes(32).toString('hex');
  private readonly startedAt = new Date().toISOString();
  private stateTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly config: PlatformConfig,
    private readonly options: ManagerProcessOptions,
  ) {
    const brokerDriver = config.redisUrl && config.messageBroker !== 'ipc' ? 'redis' : 'ipc';
    const workerEnv = { ...options.env, MESSAGE_BROKER: config.messageBroker === 'local' ? 'local' : brokerDriver };
    this.manager = new WorkerManager({
      launch: (spec) =>
        forkLauncher({
          modulePath: options.entry,
          args: [
            'worker',
            spec.type,
            '--port',
            String(spec.port),
            ...(spec.type === 'http' ? ['--worker-id', spec.id] : []),
          ],
          env: { ...workerEnv, WORKER_ID: spec.id },
          execArgv: options.execArgv,
        })(0),
      probe: (spec) => probeHealth(this.hostOf(spec), spec.port),
      healthIntervalMs: config.manager.healthIntervalSeconds * 1000,
      restartDelayMs: config.manager.restartDelaySeconds * 1000,
      maxRestarts: config.manager.maxRestarts,
      stopDeadlineMs: (config.httpWorker.drainTimeoutSeconds + 5) * 1000,
      onEvent: (event) => this.onEvent(event),
    });
  }

  /** The seed's initial workers: `count` HTTP workers on consecutive ports, then the WS worker(s). */
  initialWorkers(): WorkerSpec[] {
    const specs: WorkerSpec[] = [];
    for (let i = 0; i < this.config.httpWorker.count; i++)
      specs.push({ id: newWorkerId('http'), type: 'http', port: this.config.httpWorker.basePort + i });
    for (let i = 0; i < this.config.wsWorker.count; i++)
      specs.push({ id: newWorkerId('ws'), type: 'ws', port: this.config.wsWorker.basePort + i });
    return specs;
  }

  /** Writes the state file, starts every worker and the health checker; resolves once all answered `/health`. */
  async start(): Promise<WorkerRecord[]> {
    await this.writeState();
    this.stateTimer = setInterval(() => void this.writeState(), this.config.manager.healthIntervalSeconds * 1000);
    this.stateTimer.unref();
    this.manager.startHealthChecks();
    await Promise.all(this.initialWorkers().map((spec) => this.manager.startWorker(spec)));
    await this.writeState();
    return this.manager.list();
  }

  /** Stops every worker gracefully and removes the state file. */
  async stop(): Promise<void> {
    if (this.stateTimer) clearInterval(this.stateTimer);
    await this.manager.stop();
    await this.writing;
    await rm(managerStatePath(this.config), { force: true });
  }

  writeState(): Promise<void> {
    const state: ManagerStateFile = {
      pid: process.pid,
      started_at: this.startedAt,
      api: null,
      secret: this.secret,
      updated_at: new Date().toISOString(),
      workers: this.manager.list(),
    };
    const path = managerStatePath(this.config);
    this.writing = this.writing.then(async () => {
      await mkdir(this.config.dataDir, { recursive: true });
      await writeFile(`${path}.tmp`, JSON.stringify(state, null, 2), { mode: 0o600 });
      await chmod(`${path}.tmp`, 0o600);
      await rename(`${path}.tmp`, path);
    });
    return this.writing;
  }

  private hostOf(spec: WorkerSpec): string {
    const host = spec.type === 'http' ? this.config.httpWorker.host : this.config.wsWorker.host;
    return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  }

  private onEvent(event: WorkerManagerEvent): void {
    const { type, ...details } = event;
    this.options.log(`manager: ${type} ${JSON.stringify(details)}`);
    void this.writeState();
  }
}
