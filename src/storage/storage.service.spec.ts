import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createDataSourceOptions } from '../database/data-source-options.js';
import { InProcessJobQueue } from '../queue/in-process-job-queue.js';
import type { JobOptions, JobQueue } from '../queue/job-queue.js';
import { LocalObjectStore } from './local-object-store.js';
import { ObjectNotFoundError, type ByteRange, type ObjectInfo, type ObjectStore } from './object-store.js';
import { DELETE_OBJECT_JOB, MIRROR_COPY_JOB, StorageService } from './storage.service.js';

type StoreOperation = 'putFile' | 'get' | 'stat' | 'delete';

/** A real store that fails the next few calls of an operation, as a storage hiccup would. */
class FlakyStore implements ObjectStore {
  readonly calls: Record<StoreOperation, number> = { putFile: 0, get: 0, stat: 0, delete: 0 };
  private readonly failures: Record<StoreOperation, number> = { putFile: 0, get: 0, stat: 0, delete: 0 };
  /** Runs before the real operation, to interleave other work at an exact point. */
  beforePut: ((key: string) => Promise<void>) | null = null;

  constructor(private readonly inner: ObjectStore) {}

  get name(): string {
    return `flaky:${this.inner.name}`;
  }

  failNext(operation: StoreOperation, times: number): void {
    this.failures[operation] = times;
  }

  async putFile(key: string, filePath: string, contentType?: string): Promise<void> {
    this.enter('putFile');
    await this.beforePut?.(key);
    return this.inner.putFile(key, filePath, contentType);
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    this.enter('get');
    return this.inner.get(key, range);
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    this.enter('stat');
    return this.inner.stat(key);
  }

  async delete(key: string): Promise<void> {
    this.enter('delete');
    return this.inner.delete(key);
  }

  health(): Promise<void> {
    return this.inner.health();
  }

  private enter(operation: StoreOperation): void {
    this.calls[operation] += 1;
    if (this.failures[operation] > 0) {
      this.failures[operation] -= 1;
      throw new Error(`${operation} failed: connection reset`);
    }
  }
}

/**
 * The real queue with millisecond back-off: the service asks for the production default (seconds),
 * which would only make these tests slow, not different.
 */
function withQuickRetries(queue: JobQueue): JobQueue {
  return {
    driver: queue.driver,
    add: <T>(name: string, payload: T, options?: JobOptions) => queue.add(name, payload, { ...options, backoffMs: 5 }),
    process: (name, handler, options) => queue.process(name, handler, options),
    state: (jobId) => queue.state(jobId),
    whenIdle: (timeoutMs) => queue.whenIdle(timeoutMs),
    health: () => queue.health(),
    close: () => queue.close(),
  };
}

/** Polls until the condition holds, so a test waits for an event instead of guessing a duration. */
async function eventually(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('Condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function readText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString();
}

describe('StorageService with a primary and a mirror', () => {
  let directory: string;
  let dataSource: DataSource;
  let primary: FlakyStore;
  let mirror: FlakyStore;
  const queues: JobQueue[] = [];
  let keyCounter = 0;

  /** A fresh process: its own queue on the shared database, a service over the same stores. */
  function startService({ processJobs = true } = {}): { service: StorageService; queue: JobQueue } {
    const queue = withQuickRetries(new InProcessJobQueue(dataSource));
    queues.push(queue);
    const service = new StorageService([primary, mirror], queue);
    if (processJobs) service.onModuleInit();
    return { service, queue };
  }

  async function sourceFile(content: string): Promise<string> {
    keyCounter += 1;
    const path = join(directory, `source-${keyCounter}.txt`);
    await writeFile(path, content);
    return path;
  }

  function uniqueKey(): string {
    keyCounter += 1;
    return `packages/service-${keyCounter}/1.0.0.zip`;
  }

  beforeAll(async () => {
    // Retries and fallbacks are logged as warnings by design; the assertions check them instead.
    Logger.overrideLogger(false);
    directory = await mkdtemp(join(tmpdir(), 'tb-storage-service-'));
    dataSource = new DataSource(
      createDataSourceOptions({ type: 'sqlite', location: join(directory, 'platform.sqlite') }),
    );
    await dataSource.initialize();
    await dataSource.runMigrations();
  });

  beforeEach(() => {
    primary = new FlakyStore(new LocalObjectStore(join(directory, 'primary')));
    mirror = new FlakyStore(new LocalObjectStore(join(directory, 'mirror')));
  });

  afterEach(async () => {
    await Promise.all(queues.splice(0).map((queue) => queue.close()));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('writes to the primary before returning', async () => {
    const { service } = startService({ processJobs: false });
    const key = uniqueKey();

    await service.putFile(key, await sourceFile('package bytes'));

    expect(await readText(await primary.get(key))).toBe('package bytes');
  });

  it('copies a new object to the mirror through a job', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();

    await service.putFile(key, await sourceFile('package bytes'));
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(await readText(await mirror.get(key))).toBe('package bytes');
  });

  it('retries a mirror copy that fails for a while', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    mirror.failNext('putFile', 2);

    await service.putFile(key, await sourceFile('eventually mirrored'));
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(mirror.calls.putFile).toBe(3);
    expect(await readText(await mirror.get(key))).toBe('eventually mirrored');
  });

  it('copies a pending mirror copy after a restart', async () => {
    const crashed = startService({ processJobs: false });
    const key = uniqueKey();
    await crashed.service.putFile(key, await sourceFile('survives restarts'));
    await crashed.queue.close();
    expect(await mirror.stat(key)).toBeNull();

    const restarted = startService();
    expect(await restarted.queue.whenIdle(10_000)).toBe(true);

    expect(await readText(await mirror.get(key))).toBe('survives restarts');
  });

  it('skips the mirror copy of an object deleted before the copy ran', async () => {
    const stopped = startService({ processJobs: false });
    const key = uniqueKey();
    await stopped.service.putFile(key, await sourceFile('short-lived'));
    await stopped.service.deleteNow(key);
    await stopped.queue.close();

    const restarted = startService();
    expect(await restarted.queue.whenIdle(10_000)).toBe(true);

    expect(await mirror.stat(key)).toBeNull();
    expect(mirror.calls.putFile).toBe(0);
  });

  it('removes a mirror copy that finished after the object was deleted from the primary', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    // The whole delete (primary, then mirror) completes between reading the primary and writing the mirror.
    mirror.beforePut = async (copiedKey) => {
      mirror.beforePut = null;
      await service.delete(copiedKey);
      await eventually(() => mirror.calls.delete === 1);
    };

    await service.putFile(key, await sourceFile('deleted mid-copy'));
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(await primary.stat(key)).toBeNull();
    expect(await mirror.stat(key)).toBeNull();
  });

  it('reads from the primary while it has the object', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('from the primary'));
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(await readText(await service.get(key))).toBe('from the primary');
    expect(mirror.calls.get).toBe(0);
  });

  it('reads from the mirror when the primary has lost the object', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('kept by the mirror'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    await primary.delete(key);

    expect(await readText(await service.get(key))).toBe('kept by the mirror');
  });

  it('reads from the mirror when the primary fails', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('primary is down'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    primary.failNext('get', 1);

    expect(await readText(await service.get(key))).toBe('primary is down');
    expect(mirror.calls.get).toBe(1);
  });

  it('reads a byte range from the mirror when the primary fails', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('0123456789'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    primary.failNext('get', 1);

    expect(await readText(await service.get(key, { start: 2, end: 5 }))).toBe('2345');
  });

  it('reports the size from the mirror when the primary fails', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('12345'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    primary.failNext('stat', 1);

    expect(await service.stat(key)).toEqual({ size: 5 });
  });

  it('throws ObjectNotFoundError when no store has the object', async () => {
    const { service } = startService();

    await expect(service.get(uniqueKey())).rejects.toBeInstanceOf(ObjectNotFoundError);
    expect(await service.stat(uniqueKey())).toBeNull();
  });

  it('deletes from the primary and the mirror through jobs', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('to be deleted'));
    expect(await queue.whenIdle(10_000)).toBe(true);

    await service.delete(key);
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(await primary.stat(key)).toBeNull();
    expect(await mirror.stat(key)).toBeNull();
  });

  it('retries a delete that fails for a while on each store', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('stubborn'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    primary.failNext('delete', 2);
    mirror.failNext('delete', 1);

    await service.delete(key);
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(primary.calls.delete).toBe(3);
    expect(mirror.calls.delete).toBe(2);
    expect(await primary.stat(key)).toBeNull();
    expect(await mirror.stat(key)).toBeNull();
  });

  it('deletes from the mirror only once the primary no longer has the object', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('ordered'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    let primaryHadItWhenMirrorDeleted: boolean | null = null;
    const mirrorDelete = mirror.delete.bind(mirror);
    mirror.delete = async (deletedKey) => {
      primaryHadItWhenMirrorDeleted = (await primary.stat(deletedKey)) !== null;
      return mirrorDelete(deletedKey);
    };
    primary.failNext('delete', 2);

    await service.delete(key);
    expect(await queue.whenIdle(10_000)).toBe(true);

    expect(primaryHadItWhenMirrorDeleted).toBe(false);
    expect(await mirror.stat(key)).toBeNull();
  });

  it('finishes a pending delete after a restart', async () => {
    const first = startService();
    const key = uniqueKey();
    await first.service.putFile(key, await sourceFile('deleted later'));
    expect(await first.queue.whenIdle(10_000)).toBe(true);
    await first.queue.close();
    const crashed = startService({ processJobs: false });
    await crashed.service.delete(key);
    await crashed.queue.close();
    expect(await primary.stat(key)).not.toBeNull();

    const restarted = startService();
    expect(await restarted.queue.whenIdle(10_000)).toBe(true);

    expect(await primary.stat(key)).toBeNull();
    expect(await mirror.stat(key)).toBeNull();
  });

  it('deletes right away from every store with deleteNow, even when one store fails', async () => {
    const { service, queue } = startService();
    const key = uniqueKey();
    await service.putFile(key, await sourceFile('rolled back'));
    expect(await queue.whenIdle(10_000)).toBe(true);
    mirror.failNext('delete', 1);

    await service.deleteNow(key);

    expect(await primary.stat(key)).toBeNull();
    expect(mirror.calls.delete).toBe(1);
  });

  it('uses the job names the queue persists', () => {
    // Persisted jobs outlive a release: renaming these strands the jobs already queued.
    expect([MIRROR_COPY_JOB, DELETE_OBJECT_JOB]).toEqual(['storage.mirror-copy', 'storage.delete']);
  });
});
