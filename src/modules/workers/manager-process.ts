import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { platform } from 'node:os';
import { PlatformError } from '../../common/errors.js';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import type { PlatformConfig } from '../../config/config.js';
import { forkLauncher } from '../../supervisor/index.js';
import {
  WorkerManager,
  newWorkerId,
  type HealthProbeResult,
  type WorkerManagerEvent,
  type WorkerRecord,
  type WorkerSpec,
  type WorkerType,
} from './worker-manager.js';
import {
  NoProxy,
  type BackupServer,
  type ProxyControl,
  type ProxyFrontDoor,
  type ProxyStatus,
  type ServiceAddresses,
} from './manager-hooks.js';
import type { ClusterView, WorkerInfo } from './cluster-view.js';
import { loadManagerSecret } from './manager-secret.js';
import { lowestFreePort, portRange } from './ports.js';
import { collectWorkerMetrics, proxiedRequests, type WorkerMetricsView } from './metrics-collector.js';
import { WORKER_SLOT_FAIL_TIMEOUT_SECONDS } from './nginx/site-config.js';
import { warmUp } from './proxy-warm-up.js';

/** What `DATA_DIR/manager.json` (mode 0600) holds: how the other `tb workers` commands find the manager. */
export interface ManagerStateFile {
  pid: number;
  started_at: string;
  /** The admin API's address once it listens (null while it does not). */
  api: string | null;
  /** The admin page's address (null with `--no-ui`). */
  ui: string | null;
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

/** `GET http://127.0.0.1:PORT/health` = 200 within `timeoutMs` (default 2 s), the latency measured. */
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

/**
 * One `GET /health` through the proxy's front door, on a connection of its own: true once answered, whatever the
 * status (a warm-up request: only whether nginx chose a worker matters, seen in the worker's metrics); false when
 * the proxy could not be reached or did not answer within `timeoutMs`.
 */
export function getHealthThrough(door: ProxyFrontDoor, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: door.host,
        port: door.port,
        path: '/health',
        method: 'GET',
        timeout: timeoutMs,
        agent: false,
        headers: door.hostHeader ? { host: door.hostHeader } : {},
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(true));
        res.once('error', () => resolve(true));
      },
    );
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', () => resolve(false));
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

const EMPTY_CLUSTER: ClusterView = {
  summary: () => ({ nodes: 0, healthy_nodes: 0, members: [] }),
  remoteWorkers: () => [],
};

/** Progress of a rolling update (GET status / workers show it while it runs and after). */
export interface RollingUpdateState {
  id: string;
  state: 'running' | 'done' | 'failed';
  started_at: string;
  finished_at: string | null;
  total: number;
  done: number;
  step: string;
  /** Each old worker and its replacement, with how long the old one took to drain and exit. */
  replaced: { old: string; new: string; drain_ms: number }[];
  errors: string[];
}

/**
 * nginx keeps a failure's time in whole seconds and retries a port once more than `fail_timeout` seconds have passed:
 * 1 to 2 s after the refusal for a worker port; past the margin a worker ready since then surely gets requests again.
 */
const FAIL_TIMEOUT_MARGIN_MS = 1_500;

/** After the first round of warm-up requests, one request per this interval (and a look at the workers' metrics). */
const SERVING_POLL_MS = 100;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The `tb workers start` process: N HTTP workers and the WS worker on their pre-allocated ports, the health
 * checker, the metrics collector, scaling, rolling updates and restarts (the admin API calls these), and the
 * state file kept current. Broker: Redis when `REDIS_URL` is set (the workers reach it themselves), else the
 * manager relays IPC between its children.
 */
export class ManagerProcess {
  readonly manager: WorkerManager;
  /** `X-Cluster-Secret` (manager-secret.ts); set by `init()`. */
  secret = '';
  proxy: ProxyControl = new NoProxy();
  cluster: ClusterView = EMPTY_CLUSTER;
  apiUrl: string | null = null;
  uiUrl: string | null = null;
  readonly brokerDriver: 'redis' | 'ipc' | 'local';
  rolling: RollingUpdateState | null = null;
  private readonly workerEnv: NodeJS.ProcessEnv;
  /** The migration list on disk (its hash) when `tb db migrate` last succeeded: unchanged, nothing new to apply. */
  private migratedList: string | null = null;
  private readonly startedAt = new Date().toISOString();
  private readonly metrics = new Map<string, WorkerMetricsView>();
  private readonly order: string[] = [];
  private stateTimer: NodeJS.Timeout | undefined;
  private metricsTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private restarting = false;
  private stopped = false;

  constructor(
    private readonly config: PlatformConfig,
    private readonly options: ManagerProcessOptions,
  ) {
    this.brokerDriver =
      config.messageBroker === 'local' ? 'local' : config.redisUrl && config.messageBroker !== 'ipc' ? 'redis' : 'ipc';
    // The manager's workers sit behind its nginx on this machine: they believe its X-Forwarded-* headers
    // (client address for per-IP limits) unless the operator configured TRUST_PROXY otherwise.
    // The manager migrates the database once before it starts workers (`migrateOnce`): workers started at the same
    // moment would each run the migrations and race (on MySQL, two creating the same table).
    const workerEnv = {
      TRUST_PROXY: 'loopback',
      ...options.env,
      MESSAGE_BROKER: this.brokerDriver,
      RUN_MIGRATIONS: 'false',
    };
    this.workerEnv = workerEnv;
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
      probe: (spec) => probeHealth(this.hostOf(spec.type), spec.port),
      healthIntervalMs: config.manager.healthIntervalSeconds * 1000,
      restartDelayMs: config.manager.restartDelaySeconds * 1000,
      maxRestarts: config.manager.maxRestarts,
      stopDeadlineMs: (config.httpWorker.drainTimeoutSeconds + 5) * 1000,
      onEvent: (event) => this.onEvent(event),
    });
  }

  /** Reads (or creates) the manager secret; call before `start`. */
  async init(): Promise<void> {
    this.secret = await loadManagerSecret(this.config.dataDir, this.config.manager.clusterSecret);
  }

  /** The pre-allocated ports of a worker type (the nginx upstream lists every one). */
  portsOf(type: WorkerType): number[] {
    return type === 'http'
      ? portRange(this.config.httpWorker.basePort, this.config.manager.httpPortSlots)
      : portRange(this.config.wsWorker.basePort, this.config.manager.wsPortSlots);
  }

  /** The initial workers: `count` HTTP workers on consecutive ports, then the WS worker(s). */
  initialWorkers(): WorkerSpec[] {
    const specs: WorkerSpec[] = [];
    for (let i = 0; i < this.config.httpWorker.count; i++)
      specs.push({ id: newWorkerId('http'), type: 'http', port: this.config.httpWorker.basePort + i });
    for (let i = 0; i < this.config.wsWorker.count; i++)
      specs.push({ id: newWorkerId('ws'), type: 'ws', port: this.config.wsWorker.basePort + i });
    return specs;
  }

  /** Writes the state file, starts every worker, the health checker and the metrics collector. */
  async start(): Promise<WorkerRecord[]> {
    if (!this.secret) await this.init();
    const tooMany = ['http', 'ws'].find(
      (type) => this.initialCount(type as WorkerType) > this.portsOf(type as WorkerType).length,
    );
    if (tooMany)
      throw new PlatformError(
        'PORT_RANGE_EXHAUSTED',
        `${tooMany.toUpperCase()}_WORKERS exceeds MANAGER_${tooMany.toUpperCase()}_PORT_SLOTS: raise the slots`,
      );
    await this.writeState();
    this.stateTimer = setInterval(() => void this.writeState(), this.config.manager.healthIntervalSeconds * 1000);
    this.stateTimer.unref();
    await this.migrateOnce();
    this.manager.startHealthChecks();
    const initial = this.initialWorkers();
    await this.startAll(initial);
    await this.untilNginxUses(initial);
    this.metricsTimer = setInterval(
      () => void this.collectMetrics(),
      this.config.manager.metricsIntervalSeconds * 1000,
    );
    this.metricsTimer.unref();
    void this.collectMetrics();
    await this.writeState();
    return this.manager.list();
  }

  /** Stops every worker gracefully and removes the state file. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.stateTimer) clearInterval(this.stateTimer);
    if (this.metricsTimer) clearInterval(this.metricsTimer);
    await this.manager.stop();
    await this.writing;
    await rm(managerStatePath(this.config), { force: true });
  }

  // ---- workers ------------------------------------------------------------------------------------------------

  /** Workers that hold a port (everything but stopped and failed entries). */
  live(type?: WorkerType): WorkerRecord[] {
    return this.manager
      .list()
      .filter((w) => w.state !== 'stopped' && w.state !== 'failed' && (type === undefined || w.type === type));
  }

  /**
   * Starts one worker: a new id on the lowest free pre-allocated port, or a given id — a stopped or failed entry
   * restarts on its old port when that is free (the documented recovery: worker-stop, then worker-start).
   */
  async startWorker(type: WorkerType, id?: string): Promise<WorkerRecord> {
    this.assertRunning();
    const existing = id ? this.manager.get(id) : undefined;
    if (existing && existing.type !== type)
      throw new PlatformError('CONFLICT', `worker ${id} is a ${existing.type} worker, not ${type}`);
    if (existing && existing.state !== 'stopped' && existing.state !== 'failed')
      throw new PlatformError('CONFLICT', `worker ${id} is already ${existing.state}`);
    const held = this.live().map((w) => w.port);
    const port = existing && !held.includes(existing.port) ? existing.port : lowestFreePort(this.portsOf(type), held);
    if (port === null) throw this.rangeExhausted(type);
    if (existing) this.manager.remove(existing.worker_id);
    const spec: WorkerSpec = { id: id ?? newWorkerId(type), type, port };
    await this.launch(spec);
    await this.syncProxy();
    await this.untilNginxUses([spec]);
    return this.manager.get(spec.id)!;
  }

  /** Stops one worker (graceful: it drains first); the entry stays, `stopped`. */
  async stopWorker(id: string, graceful = true): Promise<WorkerRecord> {
    const worker = this.require(id);
    if (graceful) await this.untilAnotherWorkerServes([id]);
    if (!graceful) {
      const pid = worker.pid;
      if (pid) process.kill(pid, 'SIGKILL');
    }
    await this.manager.stopWorker(id);
    this.metrics.delete(id);
    void this.writeState();
    return this.manager.get(id)!;
  }

  /**
   * Stop (it drains: stops listening, so nginx sends new requests to the other workers), wait the restart delay,
   * start again with the same id and port.
   */
  async restartWorker(id: string): Promise<WorkerRecord> {
    const worker = this.require(id);
    if (worker.state !== 'stopped' && worker.state !== 'failed') {
      await this.untilAnotherWorkerServes([id]);
      await this.manager.stopWorker(id);
    }
    await sleep(this.config.manager.restartDelaySeconds * 1000);
    return this.startWorker(worker.type, id);
  }

  /**
   * Scale a type to `count` live workers: up starts workers on the lowest free pre-allocated ports; down stops the
   * newest ones gracefully and forgets their entries. Beyond the slots: 409 naming the fix.
   */
  async scale(type: WorkerType, count: number): Promise<{ status: 'ok'; started: string[]; stopped: string[] }> {
    this.assertRunning();
    if (this.rolling?.state === 'running')
      throw new PlatformError('CONFLICT', 'a rolling update is running; scale after it');
    if (this.restarting) throw new PlatformError('CONFLICT', 'a restart is running; scale after it');
    const slots = this.portsOf(type).length;
    if (count > slots) throw this.rangeExhausted(type, count);
    const live = this.live(type).sort((a, b) => this.order.indexOf(a.worker_id) - this.order.indexOf(b.worker_id));
    const started: string[] = [];
    const stopped: string[] = [];
    const specs: WorkerSpec[] = [];
    if (count > live.length) {
      const held = this.live().map((w) => w.port);
      for (let i = live.length; i < count; i++) {
        const port = lowestFreePort(this.portsOf(type), held)!;
        held.push(port);
        specs.push({ id: newWorkerId(type), type, port });
      }
      const results = await Promise.allSettled(specs.map((spec) => this.launch(spec)));
      results.forEach((result, index) => {
        if (result.status === 'fulfilled') started.push(specs[index].id);
      });
    } else if (count < live.length) {
      const retired = live.slice(count).reverse();
      await this.untilAnotherWorkerServes(retired.map((worker) => worker.worker_id));
      await Promise.all(
        retired.map(async (worker) => {
          await this.manager.stopWorker(worker.worker_id, { draining: true });
          this.forget(worker.worker_id);
          stopped.push(worker.worker_id);
        }),
      );
    }
    if (started.length || stopped.length) await this.syncProxy();
    await this.untilNginxUses(specs.filter((spec) => started.includes(spec.id)));
    void this.writeState();
    return { status: 'ok', started, stopped };
  }

  /** Starts a rolling update in the background; a second one while it runs is refused. */
  startRollingUpdate(): RollingUpdateState {
    this.assertRunning();
    if (this.rolling?.state === 'running')
      throw new PlatformError('CONFLICT', `rolling update ${this.rolling.id} is running`);
    if (this.restarting) throw new PlatformError('CONFLICT', 'a restart is running; update after it');
    const snapshot = this.live('http').map((w) => w.worker_id);
    const state: RollingUpdateState = {
      id: `ru_${randomBytes(4).toString('hex')}`,
      state: 'running',
      started_at: new Date().toISOString(),
      finished_at: null,
      total: snapshot.length,
      done: 0,
      step: 'starting',
      replaced: [],
      errors: [],
    };
    this.rolling = state;
    void this.rollingUpdate(state, snapshot).catch((error: unknown) => {
      state.errors.push((error as Error).message);
      state.state = 'failed';
      state.finished_at = new Date().toISOString();
    });
    return state;
  }

  /**
   * Replaces the HTTP workers of the snapshot in batches, as many at once as there are free pre-allocated ports
   * (4 workers on the default 8 slots: one batch). Per batch: every replacement starts on a free port (a launch
   * ends with the worker answering `/health`) while `MANAGER_ROLLING_WAIT_SECONDS` pass from their start;
   * `GET /health` of each (not 200 → that one is stopped, its old worker kept, the error reported); update nginx;
   * once nginx sends requests to a worker that stays, every old worker of the batch drains and stops at the same
   * time. The old workers serve until then, so the capacity never drops below the snapshot's. "Update nginx"
   * reloads it only when the site file changed, which a worker change never does: nginx already lists the new
   * ports and finds the old ones refusing connections once they drain (docs/workers.md § nginx).
   */
  private async rollingUpdate(state: RollingUpdateState, snapshot: string[]): Promise<void> {
    this.step(state, 'migrating the database');
    await this.migrateOnce({ unlessListUnchanged: true });
    const pending = [...snapshot];
    while (pending.length && !this.stopped) {
      const batch = this.nextBatch(state, pending);
      if (batch.length) await this.replaceBatch(state, batch);
    }
    this.step(state, 'finished');
    state.state = state.errors.length ? 'failed' : 'done';
    state.finished_at = new Date().toISOString();
    void this.writeState();
  }

  /** The update's current step, also logged with the seconds since it began (what bounds its duration). */
  private step(state: RollingUpdateState, step: string): void {
    state.step = step;
    const seconds = ((Date.now() - Date.parse(state.started_at)) / 1000).toFixed(1);
    this.options.log(`manager: rolling update ${state.id} +${seconds} s: ${step}`);
  }

  /**
   * Takes from `pending` the old workers the next batch replaces, each with the spec of its replacement on a free
   * port; old workers gone meanwhile count as done. Without any free port the rest is reported and dropped.
   */
  private nextBatch(state: RollingUpdateState, pending: string[]): { oldId: string; spec: WorkerSpec }[] {
    const held = this.live().map((w) => w.port);
    const batch: { oldId: string; spec: WorkerSpec }[] = [];
    while (pending.length) {
      const oldId = pending[0];
      const old = this.manager.get(oldId);
      if (!old || old.state === 'stopped' || old.state === 'failed') {
        pending.shift();
        state.done += 1;
        continue;
      }
      const port = lowestFreePort(this.portsOf('http'), held);
      if (port === null) break;
      pending.shift();
      held.push(port);
      batch.push({ oldId, spec: { id: newWorkerId('http'), type: 'http', port } });
    }
    if (!batch.length)
      for (const oldId of pending.splice(0)) {
        state.errors.push(`${oldId}: no free pre-allocated port for its replacement (raise MANAGER_HTTP_PORT_SLOTS)`);
        state.done += 1;
      }
    return batch;
  }

  private async replaceBatch(state: RollingUpdateState, batch: { oldId: string; spec: WorkerSpec }[]): Promise<void> {
    const newIds = batch.map(({ spec }) => spec.id);
    this.step(state, `starting ${newIds.join(', ')}`);
    const waited = sleep(this.config.manager.rollingWaitSeconds * 1000);
    const started = await Promise.all(
      batch.map(async (pair) => {
        try {
          await this.launch(pair.spec);
          return true;
        } catch (error) {
          state.errors.push(`${pair.oldId}: its replacement did not start: ${(error as Error).message}`);
          await this.discard(pair.spec.id);
          state.done += 1;
          return false;
        }
      }),
    );
    const launched = batch.filter((_, index) => started[index]);
    if (!launched.length) return;
    this.step(state, `checking ${launched.map(({ spec }) => spec.id).join(', ')}`);
    await waited;
    const healthy = await Promise.all(
      launched.map(async ({ oldId, spec }) => {
        const health = await probeHealth(this.hostOf('http'), spec.port);
        if (health.ok) return true;
        state.errors.push(`${oldId}: replacement ${spec.id} unhealthy (${health.error ?? 'not 200'}); kept ${oldId}`);
        await this.discard(spec.id);
        state.done += 1;
        return false;
      }),
    );
    const replacing = launched.filter((_, index) => healthy[index]);
    if (!replacing.length) return;
    this.step(state, `updating the proxy for ${replacing.map(({ spec }) => spec.id).join(', ')}`);
    await this.syncProxy();
    const oldIds = replacing.map(({ oldId }) => oldId);
    const newSpecs = replacing.map(({ spec }) => spec);
    this.step(state, `making nginx use ${newSpecs.map((spec) => spec.id).join(', ')}`);
    // The old workers may leave once nginx has used one new worker: a port that answered is never skipped, so
    // nginx always has one to try. The requests go on for the others while the old workers drain; the batch waits
    // for them no longer than the drain lasts: a port nginx still skips then is one it refused moments ago, which
    // only traffic does, and that traffic brings nginx back to it.
    const warming = this.warmUpThroughProxy(newSpecs, 'each');
    await warming.first;
    this.step(state, `draining ${oldIds.join(', ')}`);
    await Promise.all(
      replacing.map(async ({ oldId, spec }) => {
        const draining = Date.now();
        await this.manager.stopWorker(oldId, { draining: true });
        this.forget(oldId);
        state.replaced.push({ old: oldId, new: spec.id, drain_ms: Date.now() - draining });
        state.done += 1;
        void this.writeState();
      }),
    );
    this.step(state, `drained ${oldIds.join(', ')}`);
  }

  /**
   * Restart everything, one worker at a time so the others keep serving through nginx: each one (failed ones too,
   * the documented fix for "all workers unhealthy") drains and stops, waits the restart delay and starts again with
   * its id and port. With a single HTTP worker there is a gap; `update` has none.
   */
  async restartAll(): Promise<{ status: 'ok'; workers: WorkerRecord[] }> {
    this.assertRunning();
    if (this.restarting) throw new PlatformError('CONFLICT', 'a restart is already running');
    if (this.rolling?.state === 'running') throw new PlatformError('CONFLICT', 'a rolling update is running');
    this.restarting = true;
    try {
      const all = this.manager.list().sort((a, b) => this.order.indexOf(a.worker_id) - this.order.indexOf(b.worker_id));
      for (const worker of all) {
        if (this.stopped) break;
        await this.restartWorker(worker.worker_id);
      }
      void this.writeState();
      return { status: 'ok', workers: this.manager.list() };
    } finally {
      this.restarting = false;
    }
  }

  // ---- views --------------------------------------------------------------------------------------------------

  workerInfo(record: WorkerRecord): WorkerInfo {
    return {
      ...record,
      worker_type: record.type,
      node: 'local',
      uptime: record.started_at && record.pid ? Math.round((Date.now() - Date.parse(record.started_at)) / 1000) : null,
      metrics: this.metrics.get(record.worker_id) ?? emptyMetrics(),
    };
  }

  /** Local workers in start order, then the workers healthy cluster nodes reported. */
  workers(): WorkerInfo[] {
    const local = this.manager
      .list()
      .sort((a, b) => this.order.indexOf(a.worker_id) - this.order.indexOf(b.worker_id))
      .map((record) => this.workerInfo(record));
    return [...local, ...this.cluster.remoteWorkers()];
  }

  /** The registry and MCP transport this node's site fronts (the same addresses its nginx site proxies to). */
  services(): ServiceAddresses {
    return {
      registry: { host: this.config.registry.host, port: this.config.registry.port },
      mcp: { host: this.config.mcp.host, port: this.config.mcp.port },
    };
  }

  async status() {
    const nginx = await this.proxyStatus();
    const workers: Record<string, WorkerInfo> = {};
    for (const worker of this.workers().filter((w) => w.node === 'local')) workers[worker.worker_id] = worker;
    return {
      running: !this.stopped,
      pid: process.pid,
      started_at: this.startedAt,
      platform: platform(),
      broker_alive: true,
      broker: { driver: this.brokerDriver, alive: true },
      api: this.apiUrl,
      ui: this.uiUrl,
      port_slots: { http: this.portsOf('http'), ws: this.portsOf('ws') },
      workers,
      nginx,
      cluster: this.cluster.summary(),
      rolling_update: this.rolling,
    };
  }

  async health() {
    const workers: Record<string, { healthy: boolean; state: string; latency_ms: number | null }> = {};
    const local = this.manager.list().filter((w) => w.state !== 'stopped');
    for (const w of local)
      workers[w.worker_id] = { healthy: w.healthy, state: w.state, latency_ms: w.health_latency_ms };
    return {
      healthy: !this.stopped && local.length > 0 && local.every((w) => w.healthy),
      broker: { alive: true, driver: this.brokerDriver },
      workers,
      nginx: await this.proxyStatus(),
    };
  }

  metricsSummary() {
    const all = this.workers().filter((w) => w.node === 'local');
    const withLatency = all.filter((w) => w.metrics.requests > 0);
    return {
      total_workers: all.length,
      http_workers: all.filter((w) => w.type === 'http').length,
      ws_workers: all.filter((w) => w.type === 'ws').length,
      total_requests: sum(all.map((w) => w.metrics.requests)),
      total_connections: sum(all.map((w) => w.metrics.connections)),
      total_errors: sum(all.map((w) => w.metrics.errors)),
      avg_latency_ms: withLatency.length
        ? Math.round((sum(withLatency.map((w) => w.metrics.avg_latency_ms)) / withLatency.length) * 100) / 100
        : 0,
      collected_at: this.metricsCollectedAt,
    };
  }

  async reloadProxy() {
    const status = await this.proxyStatus();
    if (!status.configured) return { ok: false, message: 'nginx is not set up for this manager' };
    const result = await this.proxy.reload();
    this.options.log(`manager: nginx reload ${result.ok ? 'ok' : `failed: ${result.message}`}`);
    return result;
  }

  /**
   * Rewrites the nginx site from the manager's state and reloads nginx only when the file changed (its port, the
   * cluster backups). Workers starting and stopping change nothing there: a reload would make nginx's retiring
   * processes reset client connections, so none happens for scaling, restarts or rolling updates.
   */
  async syncProxy(): Promise<void> {
    const status = await this.proxyStatus();
    if (!status.configured) return;
    const result = await this.proxy.sync();
    this.options.log(
      `manager: nginx ${result.unchanged ? 'config unchanged' : result.ok ? 'reloaded' : `sync failed: ${result.message}`}`,
    );
  }

  async rewriteProxy(backups: BackupServer[]) {
    const status = await this.proxyStatus();
    if (!status.configured) return { ok: false, message: 'nginx is not set up for this manager' };
    return this.proxy.rewrite(backups);
  }

  private metricsCollectedAt: string | null = null;

  /** One pass of the metrics collector: `GET /metrics` of every running worker (2 s timeout each). */
  async collectMetrics(): Promise<void> {
    const running = this.manager.list().filter((w) => w.state === 'running' && w.pid);
    await Promise.all(
      running.map(async (w) => {
        const view = await collectWorkerMetrics(this.hostOf(w.type), w.port, w.type, w.pid!);
        if (view) this.metrics.set(w.worker_id, view);
      }),
    );
    this.metricsCollectedAt = new Date().toISOString();
  }

  writeState(): Promise<void> {
    const state: ManagerStateFile = {
      pid: process.pid,
      started_at: this.startedAt,
      api: this.apiUrl,
      ui: this.uiUrl,
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

  private async proxyStatus(): Promise<ProxyStatus> {
    return this.proxy.status().catch(() => ({ installed: false, version: null, configured: false, site_path: null }));
  }

  private initialCount(type: WorkerType): number {
    return type === 'http' ? this.config.httpWorker.count : this.config.wsWorker.count;
  }

  private async startAll(specs: WorkerSpec[]): Promise<void> {
    await Promise.all(specs.map((spec) => this.launch(spec)));
  }

  /**
   * Before HTTP workers stop: makes sure nginx uses another live HTTP worker. nginx skips a port that refused (free
   * and restarting ones) until a request to it succeeds, trying it once per `fail_timeout`; stopping the last
   * worker it uses would leave it none (502). One that has answered a request nginx forwarded (its
   * `requests_proxied`) is used; with none, the manager sends requests through nginx until one is (no traffic at
   * all shows nothing otherwise). Without nginx set up, or without another HTTP worker (or a WS worker stopping),
   * there is nothing to wait for.
   */
  private async untilAnotherWorkerServes(stopping: string[]): Promise<void> {
    if (!stopping.some((id) => this.manager.get(id)?.type === 'http')) return;
    const others = this.live('http').filter((w) => w.state === 'running' && !stopping.includes(w.worker_id));
    await this.warmUpThroughProxy(
      others.map((w) => ({ id: w.worker_id, type: w.type, port: w.port })),
      'one',
    ).done;
  }

  /**
   * Makes nginx use each of these new HTTP workers (see `warmUpThroughProxy`); waits for the first round of
   * requests only: a worker still unused after it sits on a port nginx refused moments ago, so traffic is there to
   * bring nginx back (the paced requests go on meanwhile, within their bound).
   */
  private async untilNginxUses(specs: WorkerSpec[]): Promise<void> {
    await this.warmUpThroughProxy(specs, 'each').round;
  }

  /**
   * Sends `GET /health` through nginx's front door, one request at a time, until nginx has used each HTTP worker
   * given (`each`) or one of them (`one`): a worker that came up on a port nginx found refusing stays skipped until
   * a request to it succeeds, and without traffic none comes (proxy-warm-up.ts). Bounded by `fail_timeout` and a
   * margin, after which nginx tries every port again anyway; a worker still unused then is logged.
   */
  private warmUpThroughProxy(
    specs: WorkerSpec[],
    until: 'each' | 'one',
  ): { first: Promise<void>; round: Promise<void>; done: Promise<void> } {
    const targets = specs.filter((spec) => spec.type === 'http');
    const door = this.proxy.frontDoor();
    const warming = (async () => {
      if (!targets.length || !door || !(await this.proxyStatus()).configured) return null;
      const started = Date.now();
      const result = warmUp(
        targets,
        {
          send: () => getHealthThrough(door),
          proxiedCount: (spec) => proxiedRequests(this.hostOf('http'), spec.port),
          now: () => Date.now(),
          sleep,
        },
        {
          until,
          limitMs: WORKER_SLOT_FAIL_TIMEOUT_SECONDS * 1000 + FAIL_TIMEOUT_MARGIN_MS,
          burstRequests: 2 * this.portsOf('http').length,
          pauseMs: SERVING_POLL_MS,
        },
        () => this.stopped,
      );
      return { result, started, door };
    })();
    return {
      first: warming.then((warm) => warm?.result.first),
      round: warming.then((warm) => warm?.result.round),
      done: warming.then(async (warm) => {
        if (!warm) return;
        const { unused, requestsSent, proxyReached } = await warm.result.done;
        const took = `${Date.now() - warm.started} ms, ${requestsSent} request(s) through nginx`;
        if (!proxyReached) {
          this.options.log(`manager: nginx does not answer at ${warm.door.host}:${warm.door.port}; nothing to warm up`);
          return;
        }
        const ids = targets.map((spec) => spec.id).join(', ');
        const failed = until === 'each' ? unused.length > 0 : unused.length === targets.length;
        this.options.log(
          failed
            ? `manager: nginx has not used ${unused.map((spec) => spec.id).join(', ')} after ${took}; going on`
            : `manager: nginx uses ${until === 'each' ? ids : `one of ${ids}`} (${took})`,
        );
      }),
    };
  }

  /**
   * Applies pending migrations once, before workers start: `tb db migrate` in a child process with the workers'
   * environment, so it runs the code on disk the new workers will run (after a deploy, the manager's own modules
   * are the old ones). Nothing when the manager runs with `RUN_MIGRATIONS=false`. Throws with the child's output
   * when it fails: no worker starts on a database it could not migrate. A rolling update skips the child when the
   * migration list on disk (`database/migrations/index.js` beside the entry, where every migration is listed) is the
   * one already applied: a start of the child costs about 0.7 s of CPU, taken from the new workers' start.
   */
  private async migrateOnce(options: { unlessListUnchanged?: boolean } = {}): Promise<void> {
    if (!this.config.runMigrations) return;
    const list = await this.migrationListOnDisk();
    if (options.unlessListUnchanged && list !== null && list === this.migratedList) {
      this.options.log('manager: migration list unchanged since the database was migrated; nothing to apply');
      return;
    }
    const started = Date.now();
    const child = spawn(process.execPath, [...this.options.execArgv, this.options.entry, 'db', 'migrate'], {
      env: { ...this.workerEnv, RUN_MIGRATIONS: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', (error) => {
        output += error.message;
        resolve(null);
      });
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (code !== 0)
      throw new PlatformError(
        'INTERNAL_ERROR',
        `database migrations failed (tb db migrate, exit ${code}): ${output.trim()}`,
      );
    this.migratedList = list;
    this.options.log(
      `manager: database migrated once before starting workers (${Date.now() - started} ms): ${output.trim().split('\n').join('; ')}`,
    );
  }

  /** A hash of the migration list the workers' code would run, or null when it cannot be read (then: migrate). */
  private async migrationListOnDisk(): Promise<string | null> {
    try {
      const entry = await realpath(this.options.entry);
      const text = await readFile(join(dirname(entry), 'database', 'migrations', 'index.js'));
      return createHash('sha256').update(text).digest('hex');
    } catch {
      return null;
    }
  }

  private launch(spec: WorkerSpec): Promise<void> {
    if (!this.order.includes(spec.id)) this.order.push(spec.id);
    return this.manager.startWorker(spec);
  }

  /** Stops (if needed) and forgets a worker that never joined (a failed replacement). */
  private async discard(id: string): Promise<void> {
    const worker = this.manager.get(id);
    if (worker && worker.state !== 'stopped' && worker.state !== 'failed') await this.manager.stopWorker(id);
    this.forget(id);
  }

  private forget(id: string): void {
    this.manager.remove(id);
    this.metrics.delete(id);
    const index = this.order.indexOf(id);
    if (index >= 0) this.order.splice(index, 1);
  }

  private require(id: string): WorkerRecord {
    const worker = this.manager.get(id);
    if (!worker) throw new PlatformError('NOT_FOUND', `no worker ${id}`);
    return worker;
  }

  private assertRunning(): void {
    if (this.stopped) throw new PlatformError('SERVICE_UNAVAILABLE', 'the manager is shutting down');
  }

  private rangeExhausted(type: WorkerType, wanted?: number): PlatformError {
    const slots = this.portsOf(type);
    const name = `MANAGER_${type.toUpperCase()}_PORT_SLOTS`;
    return new PlatformError(
      'PORT_RANGE_EXHAUSTED',
      `${wanted ?? 'another'} ${type} worker(s) do not fit the ${slots.length} pre-allocated ports ` +
        `${slots[0]}–${slots[slots.length - 1]}: raise ${name}, run "tb workers nginx-config --force", ` +
        'then "tb workers nginx-reload"',
    );
  }

  private hostOf(type: WorkerType): string {
    const host = type === 'http' ? this.config.httpWorker.host : this.config.wsWorker.host;
    return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  }

  private onEvent(event: WorkerManagerEvent): void {
    const { type, ...details } = event;
    this.options.log(`manager: ${type} ${JSON.stringify(details)}`);
    void this.writeState();
  }
}

function emptyMetrics(): WorkerMetricsView {
  return { requests: 0, connections: 0, errors: 0, avg_latency_ms: 0, memory_mb: null };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
