import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../database/data-source-options.js';
import { BullJobQueue } from './bull-job-queue.js';
import { InProcessJobQueue } from './in-process-job-queue.js';
import type { JobContext, JobQueue } from './job-queue.js';

/**
 * One contract for both queue engines: the database-backed in-process queue always, Bull when
 * TEST_REDIS_URL is set. A configured Redis that cannot be reached fails the suite, never skips it.
 */
interface QueueBackend {
  /** Prepares the shared storage (database file, Redis prefix). */
  setUp(): Promise<void>;
  /** A new queue instance on the same storage, as a restarted process would open it. */
  open(): JobQueue;
  tearDown(): Promise<void>;
}

function inProcessBackend(): QueueBackend {
  let directory = '';
  let dataSource: DataSource | null = null;
  return {
    async setUp() {
      directory = await mkdtemp(join(tmpdir(), 'tb-queue-contract-'));
      dataSource = new DataSource(
        createDataSourceOptions({ type: 'sqlite', location: join(directory, 'platform.sqlite') }),
      );
      await dataSource.initialize();
      await dataSource.runMigrations();
    },
    open() {
      if (!dataSource) throw new Error('setUp() has not run');
      return new InProcessJobQueue(dataSource);
    },
    async tearDown() {
      if (dataSource?.isInitialized) await dataSource.destroy();
      if (directory) await rm(directory, { recursive: true, force: true });
    },
  };
}

function bullBackend(redisUrl: string): QueueBackend {
  const prefix = `tbtest-queue-${randomBytes(6).toString('hex')}`;
  async function withRedis<T>(action: (redis: Redis) => Promise<T>): Promise<T> {
    // No retries: an unreachable Redis must fail the suite, not hang it.
    const redis = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 2000,
    });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
    } catch (error) {
      throw new Error(`TEST_REDIS_URL is set but ${redisUrl} cannot be reached: ${(error as Error).message}`);
    }
    try {
      return await action(redis);
    } finally {
      redis.disconnect();
    }
  }
  let reachable = false;
  return {
    async setUp() {
      await withRedis(async (redis) => expect(await redis.ping()).toBe('PONG'));
      reachable = true;
    },
    open: () => new BullJobQueue(redisUrl, prefix),
    async tearDown() {
      if (!reachable) return;
      await withRedis(async (redis) => {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
          if (keys.length > 0) await redis.del(...keys);
          cursor = next;
        } while (cursor !== '0');
      });
    },
  };
}

const backends: Array<[string, () => QueueBackend]> = [['InProcessJobQueue (SQLite)', inProcessBackend]];
const testRedisUrl = process.env.TEST_REDIS_URL;
if (testRedisUrl) backends.push(['BullJobQueue (Redis)', () => bullBackend(testRedisUrl)]);

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until the condition holds, so tests wait for events instead of guessing durations. */
async function eventually(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('Condition not met in time');
    await sleep(5);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

let jobCounter = 0;
/** Each test uses its own job names, so instances sharing one database or prefix never see each other's work. */
function uniqueName(label: string): string {
  jobCounter += 1;
  return `contract.${label}.${jobCounter}.${randomBytes(3).toString('hex')}`;
}

beforeAll(() => {
  // Retries and final failures are logged by design; the assertions below check them instead.
  Logger.overrideLogger(false);
});

describe.each(backends)('JobQueue contract: %s', (_engine, createBackend) => {
  const backend = createBackend();
  const opened: JobQueue[] = [];
  /** Shared by the tests (each uses its own job names): closing a Bull queue takes half a second. */
  let queue: JobQueue;

  function openQueue(): JobQueue {
    const instance = backend.open();
    opened.push(instance);
    return instance;
  }

  beforeAll(async () => {
    await backend.setUp();
    queue = openQueue();
  });

  afterAll(async () => {
    await Promise.all(opened.map((instance) => instance.close()));
    await backend.tearDown();
  });

  it('runs a job with its payload, name and first attempt number', async () => {
    const name = uniqueName('payload');
    const seen: Array<{ payload: unknown; job: JobContext }> = [];
    queue.process(name, async (payload, job) => {
      seen.push({ payload, job });
    });

    const id = await queue.add(name, { key: 'packages/a.zip', sizes: [1, 2] });

    await eventually(() => seen.length === 1);
    expect(seen[0]).toEqual({ payload: { key: 'packages/a.zip', sizes: [1, 2] }, job: { id, name, attempt: 1 } });
  });

  it('retries a failing job with growing back-off until it succeeds', async () => {
    const name = uniqueName('retry');
    const attempts: Array<{ attempt: number; at: number }> = [];
    queue.process(name, async (_payload, job) => {
      attempts.push({ attempt: job.attempt, at: Date.now() });
      if (attempts.length < 3) throw new Error('transient');
    });

    const id = await queue.add(name, {}, { attempts: 5, backoffMs: 40 });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(attempts.map((entry) => entry.attempt)).toEqual([1, 2, 3]);
    // Exponential: at least 40 ms before the second try, at least 80 ms before the third.
    expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(35);
    expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(75);
    expect(await queue.state(id)).toBe('completed');
  });

  it('marks a job that always fails as failed after its attempts are used up', async () => {
    const name = uniqueName('always-fails');
    let calls = 0;
    queue.process(name, async () => {
      calls += 1;
      throw new Error('permanent');
    });

    const id = await queue.add(name, {}, { attempts: 3, backoffMs: 10 });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(calls).toBe(3);
    expect(await queue.state(id)).toBe('failed');
  });

  it('does not try a failed job again on its own', async () => {
    const name = uniqueName('stays-failed');
    let calls = 0;
    queue.process(name, async () => {
      calls += 1;
      throw new Error('permanent');
    });
    await queue.add(name, {}, { attempts: 2, backoffMs: 10 });
    expect(await queue.whenIdle(10_000)).toBe(true);

    await sleep(300);

    expect(calls).toBe(2);
  });

  it('runs a job added twice with the same jobId while waiting only once', async () => {
    const name = uniqueName('dedupe');
    const first = await queue.add(name, { copy: 1 }, { jobId: 'packages/a.zip' });
    const second = await queue.add(name, { copy: 2 }, { jobId: 'packages/a.zip' });
    const payloads: unknown[] = [];

    queue.process(name, async (payload) => {
      payloads.push(payload);
    });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(second).toBe(first);
    expect(payloads).toEqual([{ copy: 1 }]);
  });

  it('runs a job added with the same jobId while the first one runs only once', async () => {
    const name = uniqueName('dedupe-active');
    const gate = deferred();
    let calls = 0;
    queue.process(name, async () => {
      calls += 1;
      await gate.promise;
    });
    await queue.add(name, {}, { jobId: 'same' });
    await eventually(() => calls === 1);

    await queue.add(name, {}, { jobId: 'same' });
    gate.resolve();

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(calls).toBe(1);
  });

  it('treats the same jobId under different job names as different jobs', async () => {
    const copies = uniqueName('copy');
    const deletes = uniqueName('delete');
    const ran: string[] = [];
    queue.process(copies, async () => void ran.push('copy'));
    queue.process(deletes, async () => void ran.push('delete'));

    await queue.add(copies, {}, { jobId: 'packages/a.zip' });
    await queue.add(deletes, {}, { jobId: 'packages/a.zip' });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(ran.sort()).toEqual(['copy', 'delete']);
  });

  it('accepts a jobId again once the earlier job has completed', async () => {
    const name = uniqueName('dedupe-after-completion');
    let calls = 0;
    queue.process(name, async () => {
      calls += 1;
    });
    await queue.add(name, {}, { jobId: 'again' });
    expect(await queue.whenIdle(10_000)).toBe(true);

    await queue.add(name, {}, { jobId: 'again' });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(calls).toBe(2);
  });

  it('accepts a jobId again once the earlier job has failed', async () => {
    const name = uniqueName('dedupe-after-failure');
    const outcomes: string[] = [];
    queue.process<{ fail: boolean }>(name, async ({ fail }) => {
      outcomes.push(fail ? 'failed' : 'succeeded');
      if (fail) throw new Error('permanent');
    });
    const failed = await queue.add(name, { fail: true }, { jobId: 'again', attempts: 1 });
    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(await queue.state(failed)).toBe('failed');

    await queue.add(name, { fail: false }, { jobId: 'again' });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(outcomes).toEqual(['failed', 'succeeded']);
  });

  it('never runs two jobs of one name at once with concurrency 1, even beside other job names', async () => {
    const serial = uniqueName('serial');
    const other = uniqueName('other');
    let running = 0;
    let mostAtOnce = 0;
    let finished = 0;
    queue.process(
      serial,
      async () => {
        running += 1;
        mostAtOnce = Math.max(mostAtOnce, running);
        await sleep(25);
        running -= 1;
        finished += 1;
      },
      { concurrency: 1 },
    );
    queue.process(other, async () => sleep(25), { concurrency: 3 });

    for (let index = 0; index < 4; index += 1) await queue.add(serial, { index });
    for (let index = 0; index < 4; index += 1) await queue.add(other, { index });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(finished).toBe(4);
    expect(mostAtOnce).toBe(1);
  });

  it('runs jobs of one name side by side up to its concurrency', async () => {
    const name = uniqueName('parallel');
    const gate = deferred();
    let running = 0;
    queue.process(
      name,
      async () => {
        running += 1;
        await gate.promise;
      },
      { concurrency: 2 },
    );

    for (let index = 0; index < 3; index += 1) await queue.add(name, { index });

    await eventually(() => running === 2);
    await sleep(100);
    expect(running).toBe(2);
    gate.resolve();
    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(running).toBe(3);
  });

  it('reports a waiting job as waiting and a finished one as completed', async () => {
    const name = uniqueName('state');
    const id = await queue.add(name, {});

    expect(await queue.state(id)).toBe('waiting');

    queue.process(name, async () => undefined);
    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(await queue.state(id)).toBe('completed');
  });

  it('reports a running job as active', async () => {
    const name = uniqueName('active');
    const gate = deferred();
    let started = false;
    queue.process(name, async () => {
      started = true;
      await gate.promise;
    });
    const id = await queue.add(name, {});
    await eventually(() => started);

    expect(await queue.state(id)).toBe('active');

    gate.resolve();
    expect(await queue.whenIdle(10_000)).toBe(true);
  });

  it('waits for a delayed job before running it', async () => {
    const name = uniqueName('delayed');
    let ranAt = 0;
    queue.process(name, async () => {
      ranAt = Date.now();
    });

    const addedAt = Date.now();
    await queue.add(name, {}, { delayMs: 200 });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(ranAt - addedAt).toBeGreaterThanOrEqual(190);
  });

  it('resolves whenIdle with true once every job has run', async () => {
    const name = uniqueName('idle');
    let finished = 0;
    queue.process(
      name,
      async () => {
        await sleep(10);
        finished += 1;
      },
      { concurrency: 2 },
    );
    for (let index = 0; index < 5; index += 1) await queue.add(name, { index });

    expect(await queue.whenIdle(10_000)).toBe(true);
    expect(finished).toBe(5);
  });

  it('resolves whenIdle with false when a job is still running at the timeout', async () => {
    const name = uniqueName('busy');
    const gate = deferred();
    let started = false;
    queue.process(name, async () => {
      started = true;
      await gate.promise;
    });
    await queue.add(name, {});
    await eventually(() => started);

    expect(await queue.whenIdle(150)).toBe(false);

    gate.resolve();
    expect(await queue.whenIdle(10_000)).toBe(true);
  });

  it('keeps jobs added before a restart and runs them once a handler registers', async () => {
    const name = uniqueName('restart');
    const before = openQueue();
    await before.add(name, { key: 'packages/kept.zip' }, { jobId: 'kept' });
    await before.add(name, { key: 'packages/also-kept.zip' });
    await before.close();

    const after = openQueue();
    const payloads: unknown[] = [];
    after.process(name, async (payload) => {
      payloads.push(payload);
    });

    await eventually(() => payloads.length === 2);
    expect(payloads).toEqual(expect.arrayContaining([{ key: 'packages/kept.zip' }, { key: 'packages/also-kept.zip' }]));
    expect(await after.whenIdle(10_000)).toBe(true);
    expect(payloads).toHaveLength(2);
  });

  it('passes its health check', async () => {
    await expect(queue.health()).resolves.toBeUndefined();
  });

  it('closes right after a handler registers without leaving a rejection nobody hears', async () => {
    // A process that lives for one request (a CLI call, a test) closes its queue while it still starts up.
    const unheard: unknown[] = [];
    const listen = (reason: unknown) => unheard.push(reason);
    process.on('unhandledRejection', listen);
    try {
      for (let round = 0; round < 12; round += 1) {
        const shortLived = backend.open();
        shortLived.process(uniqueName('short-lived'), async () => undefined);
        await sleep(round % 4);
        await shortLived.close();
      }
      await sleep(300);
    } finally {
      process.off('unhandledRejection', listen);
    }
    expect(unheard.map((reason) => (reason as Error)?.message ?? String(reason))).toEqual([]);
  });
});
