import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { STAGING_PREFIX, isStagingOwnerAlive, stagingOwnerOf } from './staging-owner.js';

export { STAGING_PREFIX } from './staging-owner.js';

/**
 * Removes what crashed uploads left under `root`. A staging directory names its owner (pid, start time, boot):
 * one whose owner no longer runs on this boot is removed at once (a kill -9 mid-upload), one whose owner runs is
 * never touched, whatever its age — instances sharing the data directory each sweep safely. A directory without
 * an owner in its name (staged by an older release) is removed once nothing in it changed for `maxAgeMs`.
 * Returns the paths removed.
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
      const owner = stagingOwnerOf(name);
      if (owner ? isStagingOwnerAlive(owner) : now - (await newestChange(path)) < maxAgeMs) continue;
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
