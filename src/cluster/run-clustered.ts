import cluster from 'node:cluster';
import type { LoggerService } from '@nestjs/common';
import { availableParallelism } from 'node:os';
import { MemoryCounterStore } from '../counters/counter-store.js';
import { applyCounterFlush } from './cluster-counter-store.js';
import { UsageError } from '../common/errors.js';
import { Supervisor, bindToProcess, clusterLauncher } from '../supervisor/index.js';

export interface ClusterOptions {
  workers: number;
  /** Runs once in the primary before any worker starts (migrations). */
  prepare(): Promise<void>;
  /** Starts the service in a worker (or in the only process) and returns its URL. */
  start(): Promise<string>;
  /** Printed once by the primary when every worker listens. */
  ready(url: string): void;
  /** Where the primary reports worker exits and restarts (the platform logger). */
  logger: LoggerService;
}

/** `--workers auto` → one per core; undefined → the configured value. */
export function parseWorkersFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === 'auto') return availableParallelism();
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new UsageError(`--workers must be 1–64 or "auto" (got "${value}")`);
  return workers;
}

/**
 * Runs a service in N worker processes sharing one port (node:cluster), so an HTTP service uses every
 * core. The primary applies migrations once, keeps the shared in-memory counters (rate limits) when
 * there is no Redis, relays cache invalidations between workers, and leaves the workers' lifecycle to
 * the process supervisor (src/supervisor): restart with back-off, graceful stop, no orphans.
 */
export async function runClustered(options: ClusterOptions): Promise<void> {
  if (options.workers <= 1 && cluster.isPrimary) {
    options.ready(await options.start());
    return;
  }
  if (cluster.isWorker) {
    const url = await options.start();
    process.send!({ tb: 'listening', url });
    return;
  }

  await options.prepare();
  const counters = new MemoryCounterStore();
  let url = '';
  const supervisor = new Supervisor({
    launch: clusterLauncher({ RUN_MIGRATIONS: 'false', TB_CLUSTER_WORKER: '1' }),
    count: options.workers,
    readiness: { message: (message) => (message as { tb?: string } | null)?.tb === 'listening', timeoutMs: 120_000 },
    backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000, stablePeriodMs: 60_000 },
    stopDeadlineMs: 5_000,
    onEvent: (event) => {
      if (event.type === 'exited' && !event.expected)
        options.logger.error(`worker ${event.pid} exited (${event.signal ?? event.code})`, undefined, 'Cluster');
      if (event.type === 'restart-scheduled')
        options.logger.warn(`starting a new worker in ${event.delayMs} ms`, 'Cluster');
      if (event.type === 'not-ready')
        options.logger.error(
          `worker ${event.pid} not listening after ${event.afterMs} ms; replacing it`,
          undefined,
          'Cluster',
        );
    },
    onMessage: async (message, worker) => {
      const kind = (message as { tb?: string } | null)?.tb;
      if (kind === 'listening') url = (message as { url: string }).url;
      else if (kind === 'bus') supervisor.broadcast(message, worker);
      else {
        const counted = await applyCounterFlush(message, counters);
        if (counted) worker.handle.send(counted);
      }
    },
  });
  bindToProcess(supervisor);
  await supervisor.start();
  options.ready(url);
}
