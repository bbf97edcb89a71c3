import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import Bull from 'bull';
import { Redis, type RedisOptions } from 'ioredis';
import {
  DEFAULT_ATTEMPTS,
  DEFAULT_BACKOFF_MS,
  type JobHandler,
  type JobOptions,
  type JobQueue,
  type JobState,
} from './job-queue.js';

/** Failed jobs stay inspectable (and report 'failed') for a week, at most this many per job name. */
const KEEP_FAILED = { age: 7 * 24 * 3600, count: 1000 };

/**
 * Bull on Redis, one Bull queue per job name. Bull's named processors on a single queue add their
 * concurrencies together and hand any job to any of them, so "concurrency 1" per name would not hold
 * and a job whose handler is not registered yet would fail; separate queues keep both promises.
 * Job ids are `<name>:<id>`, so state() knows which queue to ask.
 */
export class BullJobQueue implements JobQueue {
  readonly driver = 'bull' as const;
  private readonly logger = new Logger('JobQueue');
  private readonly queues = new Map<string, Bull.Queue>();
  private readonly processing = new Set<string>();
  /** Bull leaves connections made by createClient to their creator; close() ends them. */
  private readonly connections: Redis[] = [];
  private readonly sharedConnections = new Map<'client' | 'subscriber', Redis>();
  private closing: Promise<void> | null = null;

  constructor(
    private readonly redisUrl: string,
    private readonly prefix: string,
  ) {}

  async add<T>(name: string, payload: T, options: JobOptions = {}): Promise<string> {
    const queue = this.queueFor(name);
    const jobId = options.jobId ?? randomUUID();
    if (options.jobId) {
      // Bull ignores an add whose id exists in any state; a failed job must not block the id forever.
      const existing = await queue.getJob(jobId);
      if (existing && (await existing.isFailed())) await existing.remove();
    }
    await queue.add(payload, {
      jobId,
      attempts: options.attempts ?? DEFAULT_ATTEMPTS,
      backoff: { type: 'exponential', delay: options.backoffMs ?? DEFAULT_BACKOFF_MS },
      delay: options.delayMs,
      removeOnComplete: true,
      removeOnFail: KEEP_FAILED,
    });
    return `${name}:${jobId}`;
  }

  process<T>(name: string, handler: JobHandler<T>, options: { concurrency?: number } = {}): void {
    const queue = this.queueFor(name);
    this.processing.add(name);
    queue
      .process(options.concurrency ?? 1, async (job) => {
        await handler(job.data as T, { id: `${name}:${job.id}`, name, attempt: job.attemptsMade + 1 });
      })
      .catch((error: Error) => {
        if (!this.closing) this.logger.error(`Processing ${name} stopped: ${error.message}`);
      });
  }

  async state(jobId: string): Promise<JobState> {
    const separator = jobId.indexOf(':');
    if (separator <= 0) return 'unknown';
    const job = await this.queueFor(jobId.slice(0, separator)).getJob(jobId.slice(separator + 1));
    if (!job) return 'completed';
    const state = await job.getState();
    if (state === 'active') return 'active';
    if (state === 'failed') return 'failed';
    if (state === 'completed') return 'completed';
    return 'waiting';
  }

  /** Counts the job names this process handles, like the in-process queue: other names may have no worker here. */
  async whenIdle(timeoutMs = 30_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const counts = await Promise.all([...this.processing].map((name) => this.queueFor(name).getJobCounts()));
      if (counts.every((count) => count.waiting + count.active + count.delayed === 0)) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  }

  async health(): Promise<void> {
    await this.connection('client').ping();
  }

  /** Idempotent: disconnecting an ended ioredis client again would hold the process open for two seconds. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // A queue closed while it is still connecting leaves Bull's start-up commands to fail later with
      // "Connection is closed" (a short-lived process, or a slow machine): let each finish connecting first.
      await Promise.allSettled(
        [...this.queues.values()].map(async (queue) => {
          await queue.isReady().catch(() => undefined);
          await queue.close();
        }),
      );
      this.connections.forEach((connection) => connection.disconnect());
    })();
    return this.closing;
  }

  private queueFor(name: string): Bull.Queue {
    if (name.includes(':')) throw new Error(`Job names cannot contain ":" (got ${JSON.stringify(name)})`);
    if (this.closing) throw new Error('The job queue is closed');
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Bull(name, {
        prefix: `${this.prefix}:bull`,
        // Commands and events share two connections across every queue; each blocking reader needs its own.
        createClient: (type) => (type === 'bclient' ? this.newConnection() : this.connection(type)),
      });
      queue.on('error', (error) => this.logger.warn(`Bull ${name}: ${error.message}`));
      // Bull's process() names the blocking connection (CLIENT SETNAME) without awaiting or catching it, so a
      // queue closed before that reply came rejected with "Connection is closed" that no one handled (seen as
      // a failed test when a short-lived registry closed on MySQL + Redis). The name is cosmetic: keep the
      // call, hear its failure.
      const setWorkerName = queue.setWorkerName.bind(queue);
      queue.setWorkerName = () =>
        setWorkerName().catch((error: Error) => {
          if (!this.closing) this.logger.warn(`Bull ${name}: naming the worker connection: ${error.message}`);
        });
      this.queues.set(name, queue);
    }
    return queue;
  }

  private connection(type: 'client' | 'subscriber'): Redis {
    let connection = this.sharedConnections.get(type);
    if (!connection) {
      connection = this.newConnection();
      this.sharedConnections.set(type, connection);
    }
    return connection;
  }

  private newConnection(): Redis {
    // Bull's blocking and subscriber connections must not retry per request or check readiness.
    const options: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false };
    const connection = new Redis(this.redisUrl, options);
    connection.on('error', (error) => this.logger.warn(`Redis: ${error.message}`));
    this.connections.push(connection);
    return connection;
  }
}
