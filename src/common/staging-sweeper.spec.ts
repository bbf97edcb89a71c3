import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sweepStagedUploads } from './staging-sweeper.js';

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

  it('answers nothing for a missing root', async () => {
    expect(await sweepStagedUploads(join(root, 'absent'), 1)).toEqual([]);
  });
});
