/**
 * The seam between the code that needs background work (mirror copies, object deletion, delta
 * pre-generation) and the engine that runs it: Bull on Redis when REDIS_URL is set, otherwise a
 * database-backed in-process queue. Both persist jobs, so a restart loses nothing.
 */
export const JOB_QUEUE = Symbol('JOB_QUEUE');

export interface JobOptions {
  /** Deduplication key: while a job with this id is waiting or running, adding it again is a no-op. */
  jobId?: string;
  /** Total tries including the first (default 5). */
  attempts?: number;
  /** Base of the exponential back-off between tries (default 1000 ms). */
  backoffMs?: number;
  delayMs?: number;
}

export interface JobContext {
  id: string;
  name: string;
  attempt: number;
}

export type JobHandler<T = any> = (payload: T, job: JobContext) => Promise<void>;

export type JobState = 'waiting' | 'active' | 'completed' | 'failed' | 'unknown';

export interface JobQueue {
  readonly driver: 'bull' | 'in-process';
  add<T>(name: string, payload: T, options?: JobOptions): Promise<string>;
  process<T>(name: string, handler: JobHandler<T>, options?: { concurrency?: number }): void;
  state(jobId: string): Promise<JobState>;
  /** Resolves once no job is waiting or running (or the timeout passes); used by tests and shutdown. */
  whenIdle(timeoutMs?: number): Promise<boolean>;
  health(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_ATTEMPTS = 5;
export const DEFAULT_BACKOFF_MS = 1000;

export function backoffDelay(baseMs: number, attempt: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), 5 * 60_000);
}
