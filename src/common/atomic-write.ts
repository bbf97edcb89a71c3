import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Puts a file at `path` so that readers see the old file or the complete new one, never a part of
 * it: `fill` writes a temporary file beside the target (same directory, so same filesystem), which is
 * then renamed over it; on any failure the temporary file is removed and the target left as it was.
 */
export async function replaceFileAtomically(
  path: string,
  fill: (temporaryPath: string) => Promise<void>,
): Promise<void> {
  await makeDirectory(dirname(path));
  const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await fill(temporary);
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/** writeFile, atomically (see replaceFileAtomically). */
export function writeFileAtomically(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  return replaceFileAtomically(path, (temporary) => writeFile(temporary, data, options));
}

/**
 * `mkdir -p` without Node's recursive mode: where a parent exists but refuses children with ENOENT (procfs,
 * /sys), `mkdir(…, { recursive: true })` retries forever on a thread-pool thread, so a
 * misconfigured directory (an object store's, a cache's) would hang its callers and burn a core instead of failing.
 */
export async function makeDirectory(path: string): Promise<void> {
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
