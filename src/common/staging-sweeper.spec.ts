import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  currentBootId,
  currentStagingOwner,
  processStartTicks,
  sameBoot,
  stagingOwnerOf,
  stagingPrefix,
  type StagingOwner,
} from './staging-owner.js';
import { sweepStagedUploads } from './staging-sweeper.js';

/** A child process that idles until killed: an upload's owner we can let live or kill -9. */
async function idleProcess(): Promise<ChildProcess & { pid: number }> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(child, 'spawn');
  return child as ChildProcess & { pid: number };
}

function ownerOf(child: { pid: number }): StagingOwner {
  return { pid: child.pid, startTicks: processStartTicks(child.pid), bootId: currentBootId() };
}

describe('sweepStagedUploads', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'tb-sweep-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  async function staged(name: string, ageMs: number): Promise<string> {
    const directory = join(root, name);
    await mkdir(directory);
    await writeFile(join(directory, 'upload'), 'partial');
    const when = new Date(Date.now() - ageMs);
    await utimes(join(directory, 'upload'), when, when);
    await utimes(directory, when, when);
    return directory;
  }

  it('removes staging directories older than the limit and keeps fresh ones and other files', async () => {
    const stale = await staged('tb-upload-old', 2 * 3600_000);
    await staged('tb-upload-live', 1000);
    await staged('other-old', 2 * 3600_000);
    expect(await sweepStagedUploads(root, 3600_000)).toEqual([stale]);
    expect((await readdir(root)).sort()).toEqual(['other-old', 'tb-upload-live']);
  });

  it('keeps a directory whose file is still being written even if the directory itself is old', async () => {
    const directory = await staged('tb-upload-busy', 2 * 3600_000);
    await writeFile(join(directory, 'upload'), 'more bytes');
    expect(await sweepStagedUploads(root, 3600_000)).toEqual([]);
  });

  describe('with the owner in the name', () => {
    const children: ChildProcess[] = [];

    afterEach(() => {
      for (const child of children.splice(0)) child.kill('SIGKILL');
    });

    it('removes a fresh directory at once when its owner was killed', async () => {
      const child = await idleProcess();
      const owner = ownerOf(child);
      child.kill('SIGKILL');
      await once(child, 'exit');
      const dead = await staged(`${stagingPrefix(owner)}aB3xYz`, 0);
      expect(await sweepStagedUploads(root, 3600_000)).toEqual([dead]);
      expect(await readdir(root)).toEqual([]);
    });

    it("keeps a live owner's directory however old it is, this process's included", async () => {
      const child = await idleProcess();
      children.push(child);
      await staged(`${stagingPrefix(ownerOf(child))}aB3xYz`, 5 * 3600_000);
      await staged(`${stagingPrefix()}Qw12Er`, 5 * 3600_000);
      expect(await sweepStagedUploads(root, 3600_000)).toEqual([]);
      expect(await readdir(root)).toHaveLength(2);
    });

    it('removes a directory staged before the last boot, even under a pid that runs now', async () => {
      const stale = await staged(`${stagingPrefix({ ...currentStagingOwner(), bootId: 'a-boot-before' })}aB3xYz`, 0);
      expect(await sweepStagedUploads(root, 3600_000)).toEqual([stale]);
    });

    it('removes a directory whose pid now belongs to a process started later', async () => {
      const self = currentStagingOwner();
      if (self.startTicks === 0) return; // No /proc: the start time is not known, the pid alone decides.
      const recycled = await staged(`${stagingPrefix({ ...self, startTicks: self.startTicks - 1 })}aB3xYz`, 0);
      expect(await sweepStagedUploads(root, 3600_000)).toEqual([recycled]);
    });

    it('takes neighbouring minutes of the boot-time fallback for one boot, and nothing else', () => {
      expect(sameBoot('t29400000', 't29400001')).toBe(true);
      expect(sameBoot('t29400000', 't29400002')).toBe(false);
      expect(sameBoot('66391ba8-dceb-4e23-b4dd-fb86aa7764db', '66391ba8-dceb-4e23-b4dd-fb86aa7764db')).toBe(true);
      expect(sameBoot('66391ba8-dceb-4e23-b4dd-fb86aa7764db', '77391ba8-dceb-4e23-b4dd-fb86aa7764db')).toBe(false);
    });

    it('reads back the owner it writes into the name', () => {
      const owner = currentStagingOwner();
      expect(owner.pid).toBe(process.pid);
      expect(stagingOwnerOf(`${stagingPrefix(owner)}aB3xYz`)).toEqual(owner);
      expect(stagingOwnerOf('tb-upload-aB3xYz')).toBeNull();
    });
  });

  it('answers nothing for a missing root', async () => {
    expect(await sweepStagedUploads(join(root, 'absent'), 1)).toEqual([]);
  });
});
