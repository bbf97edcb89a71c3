import { Logger } from '@nestjs/common';
import Bull from 'bull';
import { Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_ATTEMPTS, DEFAULT_BACKOFF_MS, type JobHandler, type JobOptions, type JobQueue, type JobState } from './job-queue.js';

/** Bull on Redis: one queue per process group, jobs distinguished by name. */
export class BullJobQueue implements JobQueue {
  readonly driver = 'bull' as const;
  private readonly logger = new Logger('JobQueue');
  private readonly queue: Bull.Queue;

  constructor(redisUrl: string, prefix: string) {
    // Bull's blocking and subscriber connections must not retry per request or check readiness.
    const connectionOptions: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false };
    this.queue = new Bull('platform', {
      prefix: `${prefix}:bull`,
      createClient: () => new Redis(redisUrl, connectionOptions),
    });
    this.queue.on('error', (error) => this.logger.warn(`Bull: ${error.message}`));
  }

  async add<T>(name: string, payload: T, options: JobOptions = {}): Promise<string> {
    const job = await this.queue.add(name, payload, {
      jobId: options.jobId ? `${name}:${options.jobId}` : undefined,
      attempts: options.attempts ?? DEFAULT_ATTEMPTS,
      backoff: { type: 'exponential', delay: options.backoffMs ?? DEFAULT_BACKOFF_MS },
      delay: options.delayMs,
      removeOnComplete: true,
      removeOnFail: true,
    });
    return String(job.id);
  }

  process<T>(name: string, handler: JobHandler<T>, options: { concurrency?: number } = {}): void {
    void this.queue.process(name, options.concurrency ?? 1, async (job) => {
      await handler(job.data as T, { id: String(job.id), name, attempt: job.attemptsMade + 1 });
    });
  }

  async state(jobId: string): Promise<JobState> {
    const job = await this.queue.getJob(jobId);
    if (!job) return 'completed';
    const state = await job.getState();
    if (state === 'active') return 'active';
    if (state === 'failed') return 'failed';
    if (state === 'completed') return 'completed';
    return 'waiting';
  }

  async whenIdle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const counts = await this.queue.getJobCounts();
      if (counts.waiting + counts.active + counts.delayed === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  async health(): Promise<void> {
    const client = this.queue.client;
    await client.ping();
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
