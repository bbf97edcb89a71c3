import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, link, rm, stat, writeFile } from 'node:fs/promises';
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
