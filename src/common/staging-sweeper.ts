import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The prefix readMultipart gives each upload's staging directory. */
export const STAGING_PREFIX = 'tb-upload-';

/**
 * Removes upload staging directories under `root` last touched more than `maxAgeMs` ago: what a crash or a
 * kill -9 mid-upload left behind. A live upload keeps writing (so its mtime stays fresh), and every
 * instance sharing the data directory can sweep safely. Returns the paths removed.
 */
export async function sweepStagedUploads(root: string, maxAgeMs: number, now = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const path = join(root, name);
    try {
      if (now - (await newestChange(path)) < maxAgeMs) continue;
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone meanwhile (its upload finished): nothing to sweep.
    }
  }
  return removed;
}

async function newestChange(directory: string): Promise<number> {
  let newest = (await stat(directory)).mtimeMs;
  for (const entry of await readdir(directory)) {
    newest = Math.max(newest, (await stat(join(directory, entry))).mtimeMs);
  }
  return newest;
}
