import { randomBytes } from 'node:crypto';
import { relayBrokerMessages } from '../../broker/index.js';
import { Supervisor, type ChildHandle, type SupervisorEvent } from '../../supervisor/index.js';

export type WorkerType = 'http' | 'ws';

/** A worker's states, as the admin API and `tb workers status` show them. */
export type WorkerState = 'starting' | 'running' | 'draining' | 'stopping' | 'stopped' | 'failed';

/** What the manager knows of one worker (snake_case, as the admin API shows it). */
export interface WorkerRecord {
  worker_id: string;
  type: WorkerType;
  pid: number | null;
  port: number;
  state: WorkerState;
  healthy: boolean;
  health_latency_ms: number | null;
  last_health_check: string | null;
  started_at: string | null;
  restart_count: number;
  last_error: string | null;
}

/** The outcome of one health probe. */
export interface HealthProbeResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

export interface WorkerSpec {
  id: string;
  type: WorkerType;
  port: number;
}

export interface WorkerManagerOptions {
  /** Starts the process of one worker (a forked `tb worker http|ws`, or a fake in unit tests). */
  launch(spec: WorkerSpec): ChildHandle;
  /** One health check of a worker (HTTP `GET /health` = 200 within the timeout). */
  probe(spec: WorkerSpec): Promise<HealthProbeResult>;
  /** Health checker period (default 5 s). */
  healthIntervalMs: number;
  /** Failed probes in a row that get a worker restarted (default 3). */
  unhealthyAfter?: number;
  /** Wait before a restart (default 2 s). */
  restartDelayMs: number;
  /** Restarts of one worker before it is marked failed (default 5). */
  maxRestarts: number;
  /** A started worker not healthy by then is killed and restarted (default 60 s). */
  readyTimeoutMs?: number;
  /** Graceful stop: SIGTERM, then SIGKILL after this (workers drain in between). */
  stopDeadlineMs: number;
  onEvent?: (event: WorkerManagerEvent) => void;
}

export type WorkerManagerEvent =
  | { type: 'worker-ready'; worker_id: string; pid: number | null; port: number }
  | { type: 'worker-exited'; worker_id: string; pid: number | null; code: number | null; signal: string | null }
  | { type: 'worker-unhealthy'; worker_id: string; failures: number; error: string }
  | { type: 'worker-restarting'; worker_id: string; attempt: number; delay_ms: number }
  | { type: 'worker-failed'; worker_id: string; restarts: number };

interface ManagedWorker {
  spec: WorkerSpec;
  record: WorkerRecord;
  supervisor: Supervisor;
  failures: number;
  probing: boolean;
  killedForHealth: boolean;
  ready: Promise<void>;
}

/** `http_<8 hex>` / `ws_<8 hex>`, the worker id shape the admin API and nginx upstreams use. */
export function newWorkerId(type: WorkerType): string {
  return `${type}_${randomBytes(4).toString('hex')}`;
}

/**
 * The worker manager's core: one supervised child process per worker, each on its own port
 * with its own id. A worker that dies, or fails `unhealthyAfter` health probes in a row, is restarted with
 * the same id and port after `restartDelayMs`, at most `maxRestarts` times; then it is `failed` until
 * stopped and started again. Broker messages (`{tb: 'bus'}`) a worker sends are relayed to every other one.
 */
export class WorkerManager {
  private readonly workers = new Map<string, ManagedWorker>();
  private healthTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly options: WorkerManagerOptions) {}

  /** Starts the health checker; workers are added with `startWorker`. */
  startHealthChecks(): void {
    this.healthTimer ??= setInterval(() => void this.checkAll(), this.options.healthIntervalMs);
    this.healthTimer.unref();
  }

  /** Starts one worker; resolves once it answered its first health probe. */
  startWorker(spec: WorkerSpec): Promise<void> {
    if (this.stopping) return Promise.reject(new Error('the manager is stopping'));
    const previous = this.workers.get(spec.id);
    if (previous && previous.record.state !== 'stopped' && previous.record.state !== 'failed')
      return Promise.reject(new Error(`worker ${spec.id} is already ${previous.record.state}`));
    const record: WorkerRecord = {
      worker_id: spec.id,
      type: spec.type,
      pid: null,
      port: spec.port,
      state: 'starting',
      healthy: false,
      health_latency_ms: null,
      last_health_check: null,
      started_at: null,
      restart_count: 0,
      last_error: null,
    };
    const supervisor = new Supervisor({
      launch: () => this.options.launch(spec),
      count: 1,
      readiness: {
        probe: async () => (await this.probeInto(managed)).ok,
        probeIntervalMs: Math.min(250, this.options.healthIntervalMs),
        timeoutMs: this.options.readyTimeoutMs ?? 60_000,
      },
      // The restart policy: same delay every time, and the count never resets, so `maxRestarts` is a cap.
      backoff: {
        initialDelayMs: this.options.restartDelayMs,
        factor: 1,
        maxDelayMs: this.options.restartDelayMs,
        stablePeriodMs: Number.POSITIVE_INFINITY,
      },
      stopDeadlineMs: this.options.stopDeadlineMs,
      onEvent: (event) => this.onSupervisorEvent(managed, event),
      onMessage: (message, child) => relayBrokerMessages(message, child.handle, () => this.liveHandles()),
    });
    const managed: ManagedWorker = {
      spec,
      record,
      supervisor,
      failures: 0,
      probing: false,
      killedForHealth: false,
      ready: Promise.resolve(),
    };
    this.workers.set(spec.id, managed);
    managed.ready = supervisor.start();
    return managed.ready;
  }

  /**
   * Stops one worker gracefully: SIGTERM, it drains (finishes in-flight requests, `/health` 503), then exits;
   * SIGKILL after the deadline. Its record stays, `stopped`. `draining` marks a worker being retired (rolling update).
   */
  async stopWorker(id: string, { draining = false }: { draining?: boolean } = {}): Promise<void> {
    const managed = this.workers.get(id);
    if (!managed) throw new Error(`no worker ${id}`);
    if (managed.record.state !== 'failed') managed.record.state = draining ? 'draining' : 'stopping';
    await managed.supervisor.stop();
    managed.record.state = 'stopped';
    managed.record.healthy = false;
    managed.record.pid = null;
  }

  /** Forgets a stopped or failed worker. */
  remove(id: string): boolean {
    const managed = this.workers.get(id);
    if (!managed || (managed.record.state !== 'stopped' && managed.record.state !== 'failed')) return false;
    return this.workers.delete(id);
  }

  list(): WorkerRecord[] {
    return [...this.workers.values()].map((managed) => ({ ...managed.record }));
  }

  get(id: string): WorkerRecord | undefined {
    const managed = this.workers.get(id);
    return managed && { ...managed.record };
  }

  /** Stops the health checker and every worker (SIGTERM, drain, SIGKILL after the deadline). Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.healthTimer) clearInterval(this.healthTimer);
      await Promise.all([...this.workers.keys()].map((id) => this.stopWorker(id)));
    })();
    return this.stopping;
  }

  /** Synchronous last resort for `process.on('exit')`. */
  killAllNow(): void {
    for (const managed of this.workers.values()) managed.supervisor.killAllNow();
  }

  /** Sends a message to every live worker (config reload, shutdown notices…). */
  broadcast(message: unknown): void {
    for (const handle of this.liveHandles()) handle.send(message);
  }

  /** One round of the health checker: probes every running worker; restarts one that failed too often. */
  async checkAll(): Promise<void> {
    await Promise.all(
      [...this.workers.values()]
        .filter((managed) => managed.record.state === 'running' && !managed.probing)
        .map(async (managed) => {
          managed.probing = true;
          try {
            const result = await this.probeInto(managed);
            if (result.ok || managed.record.state !== 'running') return;
            const error = result.error ?? 'unhealthy';
            this.emit({ type: 'worker-unhealthy', worker_id: managed.spec.id, failures: managed.failures, error });
            if (managed.failures >= (this.options.unhealthyAfter ?? 3)) {
              managed.record.last_error = `${managed.failures} failed health checks: ${error}`;
              managed.killedForHealth = true;
              managed.supervisor.children()[0]?.handle.kill('SIGKILL');
            }
          } finally {
            managed.probing = false;
          }
        }),
    );
  }

  private async probeInto(managed: ManagedWorker): Promise<HealthProbeResult> {
    const result = await this.options
      .probe(managed.spec)
      .catch((error: unknown): HealthProbeResult => ({ ok: false, latencyMs: 0, error: (error as Error).message }));
    const record = managed.record;
    record.last_health_check = new Date().toISOString();
    record.health_latency_ms = Math.round(result.latencyMs * 10) / 10;
    record.healthy = result.ok;
    managed.failures = result.ok ? 0 : managed.failures + 1;
    return result;
  }

  private onSupervisorEvent(managed: ManagedWorker, event: SupervisorEvent): void {
    const record = managed.record;
    const id = managed.spec.id;
    switch (event.type) {
      case 'spawned':
        record.pid = event.pid ?? null;
        record.started_at = new Date().toISOString();
        if (record.state !== 'stopping' && record.state !== 'draining') record.state = 'starting';
        record.healthy = false;
        managed.failures = 0;
        break;
      case 'ready':
        record.state = 'running';
        record.healthy = true;
        this.emit({ type: 'worker-ready', worker_id: id, pid: record.pid, port: record.port });
        break;
      case 'not-ready':
        record.last_error = `not healthy within ${event.afterMs} ms of its start`;
        break;
      case 'exited':
        record.healthy = false;
        record.pid = null;
        if (!event.expected) {
          if (!managed.killedForHealth) record.last_error = `exited (${event.signal ?? `code ${event.code}`})`;
          record.state = 'stopped';
        }
        managed.killedForHealth = false;
        this.emit({
          type: 'worker-exited',
          worker_id: id,
          pid: event.pid ?? null,
          code: event.code,
          signal: event.signal,
        });
        break;
      case 'restart-scheduled':
        if (event.attempt > this.options.maxRestarts) {
          record.state = 'failed';
          this.emit({ type: 'worker-failed', worker_id: id, restarts: record.restart_count });
          void managed.supervisor.stop();
          return;
        }
        record.restart_count = event.attempt;
        this.emit({ type: 'worker-restarting', worker_id: id, attempt: event.attempt, delay_ms: event.delayMs });
        break;
      case 'killed-after-deadline':
        record.last_error = `did not stop within ${this.options.stopDeadlineMs} ms; killed`;
        break;
    }
  }

  private liveHandles(): ChildHandle[] {
    const handles: ChildHandle[] = [];
    for (const managed of this.workers.values())
      for (const child of managed.supervisor.children()) if (child) handles.push(child.handle);
    return handles;
  }

  private emit(event: WorkerManagerEvent): void {
    this.options.onEvent?.(event);
  }
}
