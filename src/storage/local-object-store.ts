import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { ObjectNotFoundError, assertSafeKey, type ByteRange, type ObjectInfo, type ObjectStore } from './object-store.js';

export class LocalObjectStore implements ObjectStore {
  readonly name: string;

  constructor(private readonly root: string) {
    this.name = `local:${root}`;
  }

  async putFile(key: string, filePath: string): Promise<void> {
    const target = this.pathOf(key);
    await makeDirectory(dirname(target));
    // Copy beside the target, then rename: readers never see a half-written object.
    const temporary = `${target}.${randomUUID()}.partial`;
    try {
      // A hard link costs nothing when the source is on the same filesystem (uploads are staged in
      // DATA_DIR/tmp); otherwise copy. Either way the target appears atomically through rename.
      await link(filePath, temporary).catch(() => copyFile(filePath, temporary));
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    const info = await this.stat(key);
    if (!info) throw new ObjectNotFoundError(key);
    return createReadStream(path, range ? { start: range.start, end: range.end } : undefined);
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    try {
      const info = await stat(this.pathOf(key));
      return info.isFile() ? { size: info.size } : null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async health(): Promise<void> {
    await makeDirectory(this.root);
    const probe = join(this.root, `.health-${randomUUID()}`);
    await writeFile(probe, 'ok');
    await rm(probe, { force: true });
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    return join(this.root, ...key.split('/'));
  }
}

/**
 * `mkdir -p` without Node's recursive mode: where a parent exists but refuses children with ENOENT (procfs,
 * /sys), `mkdir(…, { recursive: true })` retries forever on a thread-pool thread, so a
 * misconfigured store would hang its callers and burn a core instead of failing.
 */
async function makeDirectory(path: string): Promise<void> {
  try {
    await mkdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return assertDirectory(path, error);
    const parent = dirname(path);
    if (code !== 'ENOENT' || parent === path) throw error;
    await makeDirectory(parent);
    // Once: a parent that exists and still yields ENOENT will not change its mind.
    await mkdir(path).catch((retryError: NodeJS.ErrnoException) => {
      if (retryError.code === 'EEXIST') return assertDirectory(path, retryError);
      throw retryError;
    });
  }
}

async function assertDirectory(path: string, error: unknown): Promise<void> {
  if (!(await stat(path)).isDirectory()) throw error;
}
