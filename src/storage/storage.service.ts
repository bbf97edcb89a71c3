import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { mkdtemp, rm } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { JOB_QUEUE, type JobQueue } from '../queue/job-queue.js';
import { ObjectNotFoundError, type ByteRange, type ObjectInfo, type ObjectStore } from './object-store.js';
import { OBJECT_STORES } from './storage.tokens.js';

export const MIRROR_COPY_JOB = 'storage.mirror-copy';
export const DELETE_OBJECT_JOB = 'storage.delete';

interface MirrorCopyPayload {
  key: string;
  mirror: number;
}

interface DeletePayload {
  key: string;
  store: number;
}

/**
 * One primary and any number of mirrors. Writes land on the primary first; each mirror copy and each
 * delete is a persisted, retried job, so a restart or a storage hiccup leaves nothing behind.
 * Reads fall back to the mirrors in order when the primary fails.
 */
@Injectable()
export class StorageService implements OnModuleInit {
  private readonly logger = new Logger('Storage');

  constructor(
    @Inject(OBJECT_STORES) private readonly stores: ObjectStore[],
    @Inject(JOB_QUEUE) private readonly queue: JobQueue,
  ) {}

  onModuleInit(): void {
    this.queue.process<MirrorCopyPayload>(MIRROR_COPY_JOB, (payload) => this.copyToMirror(payload), { concurrency: 2 });
    this.queue.process<DeletePayload>(DELETE_OBJECT_JOB, (payload) => this.deleteFromStore(payload));
  }

  get primary(): ObjectStore {
    return this.stores[0];
  }

  get mirrors(): ObjectStore[] {
    return this.stores.slice(1);
  }

  async putFile(key: string, filePath: string, contentType?: string): Promise<void> {
    await this.primary.putFile(key, filePath, contentType);
    for (let mirror = 1; mirror < this.stores.length; mirror += 1) {
      await this.queue.add<MirrorCopyPayload>(
        MIRROR_COPY_JOB,
        { key, mirror },
        { jobId: `${mirror}:${key}`, attempts: 10 },
      );
    }
  }

  /** Opens the object on the first store that has it, primary first. */
  async get(key: string, range?: ByteRange): Promise<Readable> {
    let lastError: unknown = new ObjectNotFoundError(key);
    for (const store of this.stores) {
      try {
        return await store.get(key, range);
      } catch (error) {
        lastError = error;
        if (!(error instanceof ObjectNotFoundError))
          this.logger.warn(`Reading ${key} from ${store.name} failed: ${(error as Error).message}`);
      }
    }
    throw lastError;
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    for (const store of this.stores) {
      try {
        const info = await store.stat(key);
        if (info) return info;
      } catch (error) {
        this.logger.warn(`Stat of ${key} on ${store.name} failed: ${(error as Error).message}`);
      }
    }
    return null;
  }

  /** Removes the object from every store through retried jobs. */
  async delete(key: string): Promise<void> {
    for (let store = 0; store < this.stores.length; store += 1) {
      await this.queue.add<DeletePayload>(
        DELETE_OBJECT_JOB,
        { key, store },
        { jobId: `${store}:${key}`, attempts: 20 },
      );
    }
  }

  /** Deletes right away where possible, for rolling back an object that was never referenced. */
  async deleteNow(key: string): Promise<void> {
    await Promise.allSettled(this.stores.map((store) => store.delete(key)));
  }

  private async copyToMirror({ key, mirror }: MirrorCopyPayload): Promise<void> {
    const target = this.stores[mirror];
    if (!target) return;
    let source: Readable;
    try {
      source = await this.primary.get(key);
    } catch (error) {
      // Deleted before the copy ran: nothing to mirror.
      if (error instanceof ObjectNotFoundError) return;
      throw error;
    }
    const directory = await mkdtemp(join(tmpdir(), 'tb-mirror-'));
    try {
      const file = join(directory, 'object');
      await pipeline(source, createWriteStream(file));
      await target.putFile(key, file);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    // Deleted from the primary while this copy ran: the mirror's delete job may be done already, so undo the copy.
    if (!(await this.primary.stat(key))) await target.delete(key);
  }

  private async deleteFromStore({ key, store }: DeletePayload): Promise<void> {
    const target = this.stores[store];
    if (!target) return;
    // Mirrors go after the primary: a mirror copy still queued would otherwise bring the object back to the mirror.
    if (store > 0 && (await this.primary.stat(key))) {
      throw new Error(
        `${key} is still on the primary ${this.primary.name}; its delete from ${target.name} waits for that`,
      );
    }
    await target.delete(key);
  }
}
