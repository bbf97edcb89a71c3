import { randomUUID } from 'node:crypto';
import { copyFile, link, open, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { makeDirectory, replaceFileAtomically } from '../common/atomic-write.js';
import {
  ObjectNotFoundError,
  assertSafeKey,
  type ByteRange,
  type ObjectInfo,
  type ObjectStore,
} from './object-store.js';

export class LocalObjectStore implements ObjectStore {
  readonly name: string;

  constructor(private readonly root: string) {
    this.name = `local:${root}`;
  }

  async putFile(key: string, filePath: string): Promise<void> {
    const target = this.pathOf(key);
    // A hard link costs nothing when the source is on the same filesystem (uploads are staged in
    // DATA_DIR/tmp); otherwise copy. Either way readers never see a half-written object.
    await replaceFileAtomically(target, (temporary) =>
      link(filePath, temporary).catch(() => copyFile(filePath, temporary)),
    );
  }

  /**
   * Opens the file before answering: a delete racing the read either wins (ObjectNotFoundError, a 404) or
   * loses (the open handle keeps the bytes readable until the stream ends) — never a half-sent response.
   */
  async get(key: string, range?: ByteRange): Promise<Readable> {
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'EISDIR')
        throw new ObjectNotFoundError(key);
      throw error;
    }
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      throw new ObjectNotFoundError(key);
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
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
