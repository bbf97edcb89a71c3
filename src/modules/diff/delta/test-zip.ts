import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';

/** One entry of an archive a delta test builds: a directory when `content` is omitted. */
export interface TestZipEntry {
  path: string;
  content?: Buffer | string;
  compress?: boolean;
}

const FIXED_TIME = new Date(Date.UTC(2024, 0, 2, 3, 4, 6));

/** Writes a small ZIP for the delta specs and the benchmark (the shared fixture builder is not a dependency here). */
export async function writeTestZip(path: string, entries: TestZipEntry[]): Promise<void> {
  const zip = new yazl.ZipFile();
  const done = pipeline(zip.outputStream as unknown as Readable, createWriteStream(path));
  for (const entry of entries) {
    if (entry.content === undefined) {
      zip.addEmptyDirectory(entry.path, { mtime: FIXED_TIME, forceDosTimestamp: true });
    } else {
      const content = typeof entry.content === 'string' ? Buffer.from(entry.content) : entry.content;
      zip.addBuffer(content, entry.path, { mtime: FIXED_TIME, forceDosTimestamp: true, compress: entry.compress ?? true });
    }
  }
  zip.end();
  await done;
}
