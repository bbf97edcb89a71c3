import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { MemoryCounterStore } from '../counters/counter-store.js';
import { applyCounterFlush } from './cluster-counter-store.js';
import { UsageError } from '../common/errors.js';

export interface ClusterOptions {
  workers: number;
  /** Runs once in the primary before any worker starts (migrations). */
  prepare(): Promise<void>;
  /** Starts the service in a worker (or in the only process) and returns its URL. */
  start(): Promise<string>;
  /** Printed once by the primary when every worker listens. */
  ready(url: string): void;
}

/** `--workers auto` → one per core; undefined → the configured value. */
export function parseWorkersFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value === 'auto') return availableParallelism();
  const workers = Number(value);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) throw new UsageError(`--workers must be 1–64 or "auto" (got "${value}")`);
  return workers;
}

/**
 * Runs a service in N worker processes sharing one port (node:cluster), so an HTTP service uses every
 * core. The primary applies migrations once, keeps the shared in-memory counters (rate limits) when
 * there is no Redis, relays cache invalidations between workers, and restarts a worker that dies.
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
  let announced = false;
  let listening = 0;
  let stopping = false;

  const fork = (): Worker => {
    const worker = cluster.fork({ RUN_MIGRATIONS: 'false', TB_CLUSTER_WORKER: '1' });
    worker.on('message', async (message: any) => {
      const counted = await applyCounterFlush(message, counters);
      if (counted) {
        if (worker.isConnected()) worker.send(counted);
      } else if (message?.tb === 'bus') {
        for (const other of Object.values(cluster.workers ?? {})) if (other && other !== worker && other.isConnected()) other.send(message);
      } else if (message?.tb === 'listening') {
        listening += 1;
        if (!announced && listening >= options.workers) {
          announced = true;
          options.ready(message.url);
        }
      }
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    console.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting a new one`);
    setTimeout(fork, 1000);
  });
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  for (let index = 0; index < options.workers; index += 1) fork();
}
