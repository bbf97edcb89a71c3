import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomically } from '../../common/atomic-write.js';
import { PlatformError } from '../../common/errors.js';

/** File name of the lock file inside the mods directory. */
export const LOCK_FILE_NAME = 'tb-mods.lock.json';
const LOCK_FILE_VERSION = 1;

/** One installed mod as the lock file records it (wire names: the file is read by people and tools). */
export interface LockedMod {
  name: string;
  version: string;
  checksum_sha256: string;
  /** Base URL of the registry it came from. */
  registry: string;
  /** ISO 8601 UTC. */
  installed_at: string;
  /** The manifest's entry, relative to the mod's directory. */
  entry: string;
  /** Requirement strings from the manifest. */
  dependencies: string[];
}

interface LockFileData {
  lockfile_version: number;
  mods: Record<string, LockedMod>;
}

/**
 * `<modsDir>/tb-mods.lock.json`: which mod is installed at which version, with the SHA-256 of the
 * archive it came from. Writes go to a temporary file renamed over the old one, so a crash leaves
 * either the old or the new file, never half of one; writes from one process are serialised.
 */
export class ModsLockFile {
  readonly path: string;
  private pending: Promise<unknown> = Promise.resolve();

  constructor(readonly modsDir: string) {
    this.path = join(modsDir, LOCK_FILE_NAME);
  }

  /** Every locked mod, sorted by name. A missing file is an empty lock. */
  async list(): Promise<LockedMod[]> {
    const data = await this.read();
    return Object.values(data.mods).sort((left, right) => left.name.localeCompare(right.name));
  }

  async get(name: string): Promise<LockedMod | undefined> {
    return (await this.read()).mods[name];
  }

  /** Records (or replaces) a mod. */
  record(mod: LockedMod): Promise<void> {
    return this.mutate((data) => {
      data.mods[mod.name] = { ...mod, dependencies: [...mod.dependencies] };
    });
  }

  /** Removes a mod; returns what was recorded, or undefined. */
  async remove(name: string): Promise<LockedMod | undefined> {
    let removed: LockedMod | undefined;
    await this.mutate((data) => {
      removed = data.mods[name];
      delete data.mods[name];
    });
    return removed;
  }

  private async read(): Promise<LockFileData> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lockfile_version: LOCK_FILE_VERSION, mods: {} };
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `${this.path} is not valid JSON (${(error as Error).message}); fix or delete it and reinstall the mods`,
      );
    }
    const data = parsed as Partial<LockFileData> | null;
    if (
      !data ||
      typeof data !== 'object' ||
      typeof data.mods !== 'object' ||
      data.mods === null ||
      Array.isArray(data.mods)
    ) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `${this.path} has no "mods" object; fix or delete it and reinstall the mods`,
      );
    }
    if (typeof data.lockfile_version === 'number' && data.lockfile_version > LOCK_FILE_VERSION) {
      throw new PlatformError(
        'UNPROCESSABLE_ENTITY',
        `${this.path} is lock file version ${data.lockfile_version}; this tb reads version ${LOCK_FILE_VERSION}`,
      );
    }
    return { lockfile_version: LOCK_FILE_VERSION, mods: data.mods };
  }

  private mutate(change: (data: LockFileData) => void): Promise<void> {
    const run = this.pending.then(async () => {
      const data = await this.read();
      change(data);
      await this.write(data);
    });
    this.pending = run.catch(() => undefined);
    return run;
  }

  private async write(data: LockFileData): Promise<void> {
    const sorted: LockFileData = {
      lockfile_version: LOCK_FILE_VERSION,
      mods: Object.fromEntries(
        Object.keys(data.mods)
          .sort()
          .map((name) => [name, data.mods[name]]),
      ),
    };
    await writeFileAtomically(this.path, `${JSON.stringify(sorted, null, 2)}\n`, { mode: 0o644 });
  }
}
