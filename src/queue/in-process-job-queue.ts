import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { In, LessThanOrEqual, type DataSource, type Repository } from 'typeorm';
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  backoffDelay,
  type JobHandler,
  type JobOptions,
  type JobQueue,
  type JobState,
} from './job-queue.js';
import { QueueJobEntity } from './queue-job.entity.js';

const POLL_INTERVAL_MS = 250;
/** A claimed job whose worker died is picked up again after its lease runs out. */
const LEASE_MS = 10 * 60_000;

/**
 * The embedded queue: jobs live in the platform database (SQLite by default), so they survive a
 * restart exactly like Bull's do in Redis. Claiming is one conditional UPDATE, so several processes
 * sharing a database never run the same job twice at once.
 */
export class InProcessJobQueue implements JobQueue {
  readonly driver = 'in-process' as const;
  private readonly logger = new Logger('JobQueue');
  private readonly jobs: Repository<QueueJobEntity>;
  private readonly handlers = new Map<string, { handler: JobHandler; concurrency: number; running: number }>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** A kick that arrived during a poll: that poll may have read the table before the new work existed. */
  private pollRequested = false;
  private closed = false;
  private readonly running = new Set<Promise<void>>();

  constructor(dataSource: DataSource) {
    this.jobs = dataSource.getRepository(QueueJobEntity);
  }

  async add<T>(name: string, payload: T, options: JobOptions = {}): Promise<string> {
    const dedupeKey = options.jobId ? `${name}:${options.jobId}` : null;
    if (dedupeKey) {
      const existing = await this.jobs.findOne({ where: { dedupeKey } });
      if (existing) return existing.id;
    }
    const now = new Date();
    const job = this.jobs.create({
      id: randomUUID(),
      name,
      dedupeKey,
      payload: JSON.stringify(payload ?? null),
      state: 'waiting',
      attempts: 0,
      maxAttempts: options.attempts ?? DEFAULT_ATTEMPTS,
      backoffMs: options.backoffMs ?? DEFAULT_BACKOFF_MS,
      runAt: new Date(now.getTime() + (options.delayMs ?? 0)),
      lockedUntil: null,
      lastError: null,
      createdAt: now,
    });
    try {
      await this.jobs.insert(job);
    } catch (error) {
      // Lost a race on the dedupe key: the other insert is the job.
      if (dedupeKey) {
        const existing = await this.jobs.findOne({ where: { dedupeKey } });
        if (existing) return existing.id;
      }
      throw error;
    }
    this.kick();
    return job.id;
  }

  process<T>(name: string, handler: JobHandler<T>, options: { concurrency?: number } = {}): void {
    this.handlers.set(name, { handler: handler as JobHandler, concurrency: options.concurrency ?? 1, running: 0 });
    this.kick();
  }

  async state(jobId: string): Promise<JobState> {
    const job = await this.jobs.findOne({ where: { id: jobId } });
    if (!job) return 'completed';
    return job.state;
  }

  async whenIdle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const pending = await this.jobs.count({
        where: { state: In(['waiting', 'active']), name: In([...this.handlers.keys()]) },
      });
      if (pending === 0 && this.running.size === 0) return true;
      this.kick();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  async health(): Promise<void> {
    await this.jobs.count({ take: 1 } as never);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.allSettled([...this.running]);
  }

  private kick(): void {
    if (this.closed || this.handlers.size === 0) return;
    if (this.polling) {
      this.pollRequested = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), 0);
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.poll(), POLL_INTERVAL_MS);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    try {
      const now = new Date();
      const names = [...this.handlers.entries()].filter(([, h]) => h.running < h.concurrency).map(([name]) => name);
      if (names.length === 0) return;
      const due = await this.jobs.find({
        where: [
          { name: In(names), state: 'waiting', runAt: LessThanOrEqual(now) },
          { name: In(names), state: 'active', lockedUntil: LessThanOrEqual(now) },
        ],
        order: { runAt: 'ASC' },
        take: 20,
      });
      for (const job of due) {
        const entry = this.handlers.get(job.name);
        if (!entry || entry.running >= entry.concurrency) continue;
        if (!(await this.claim(job, now))) continue;
        entry.running += 1;
        const run = this.run(job, entry.handler)
          // Recording the outcome can fail (database gone); the lease brings the job back, the process must live on.
          .catch((error: unknown) => {
            this.logger.error(
              `Recording the outcome of job ${job.name} ${job.id} failed: ${(error as Error)?.message ?? error}`,
            );
          })
          .finally(() => {
            entry.running -= 1;
            this.running.delete(run);
            this.kick();
          });
        this.running.add(run);
      }
    } catch (error) {
      if (!this.closed) this.logger.warn(`Polling jobs failed: ${(error as Error).message}`);
    } finally {
      this.polling = false;
      if (this.pollRequested) {
        this.pollRequested = false;
        this.kick();
      } else {
        this.schedule();
      }
    }
  }

  private async claim(job: QueueJobEntity, now: Date): Promise<boolean> {
    const lockedUntil = new Date(now.getTime() + LEASE_MS);
    const result = await this.jobs
      .createQueryBuilder()
      .update()
      .set({ state: 'active', lockedUntil, attempts: job.attempts + 1 })
      .where('id = :id AND attempts = :attempts', { id: job.id, attempts: job.attempts })
      .execute();
    if (result.affected !== 1) return false;
    job.attempts += 1;
    return true;
  }

  private async run(job: QueueJobEntity, handler: JobHandler): Promise<void> {
    try {
      await handler(JSON.parse(job.payload), { id: job.id, name: job.name, attempt: job.attempts });
      await this.jobs.delete({ id: job.id });
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      if (job.attempts >= job.maxAttempts) {
        this.logger.error(`Job ${job.name} ${job.id} failed after ${job.attempts} attempts: ${message}`);
        await this.jobs.update(
          { id: job.id },
          { state: 'failed', dedupeKey: null, lockedUntil: null, lastError: message },
        );
      } else {
        const runAt = new Date(Date.now() + backoffDelay(job.backoffMs, job.attempts));
        this.logger.warn(`Job ${job.name} ${job.id} attempt ${job.attempts} failed, retrying: ${message}`);
        await this.jobs.update({ id: job.id }, { state: 'waiting', runAt, lockedUntil: null, lastError: message });
      }
    }
  }
}
