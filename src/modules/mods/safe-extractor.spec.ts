import { lstat, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zipBuilder, type ZipBuilder } from '../../../test/fixtures/zip-builder.js';
import { extractArchiveSafely } from './safe-extractor.js';

describe('extractArchiveSafely', () => {
  let workspace: string;
  let target: string;

  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'safe-extract-'));
    target = join(workspace, 'mods', 'hello');
    await mkdir(join(workspace, 'mods'));
  });

  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  async function archive(builder: ZipBuilder): Promise<string> {
    const path = join(workspace, 'archive.zip');
    await builder.writeTo(path);
    return path;
  }

  /** Every path under the workspace except the archive itself. */
  async function writtenPaths(): Promise<string[]> {
    const entries = await readdir(workspace, { recursive: true });
    return entries.filter((name) => name !== 'archive.zip').sort();
  }

  it('extracts files and nested directories with their content', async () => {
    const path = await archive(
      zipBuilder().add('tb-mod.json', '{}').withDirectory('lib').add('lib/util.js', 'export const x = 1;\n'),
    );
    const summary = await extractArchiveSafely(path, target);
    expect(summary).toEqual({ files: 2, directories: 1, bytes: 22 });
    expect(await readFile(join(target, 'lib', 'util.js'), 'utf8')).toBe('export const x = 1;\n');
  });

  it('creates parent directories an archive does not list', async () => {
    const path = await archive(zipBuilder().add('a/b/c.txt', 'deep'));
    await extractArchiveSafely(path, target);
    expect(await readFile(join(target, 'a', 'b', 'c.txt'), 'utf8')).toBe('deep');
  });

  it('ignores the permissions stored in the archive', async () => {
    const path = await archive(zipBuilder().add('run.sh', '#!/bin/sh\n', { unixMode: 0o100777 }));
    await extractArchiveSafely(path, target);
    expect((await stat(join(target, 'run.sh'))).mode & 0o777).toBe(0o644);
  });

  it('refuses a ".." traversal entry and writes nothing anywhere', async () => {
    const path = await archive(zipBuilder().add('index.js', 'ok').add('../../evil.txt', 'pwned'));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'ZIP_REJECTED' });
    expect(await writtenPaths()).toEqual(['mods']);
  });

  it('refuses an absolute path entry and writes nothing anywhere', async () => {
    const path = await archive(zipBuilder().add(join(workspace, 'evil.txt'), 'pwned'));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'ZIP_REJECTED' });
    expect(await writtenPaths()).toEqual(['mods']);
  });

  it('refuses a symbolic link entry and creates no link', async () => {
    const path = await archive(zipBuilder().add('index.js', 'ok').withSymlink('escape', '/etc'));
    await expect(extractArchiveSafely(path, target)).rejects.toThrow(/symbolic link/);
    expect(await writtenPaths()).toEqual(['mods']);
  });

  it('refuses a symbolic link followed by a file written through it', async () => {
    const path = await archive(zipBuilder().withSymlink('escape', workspace).add('escape/evil.txt', 'pwned'));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'ZIP_REJECTED' });
    expect(await writtenPaths()).toEqual(['mods']);
  });

  it('refuses a backslash path that Windows would read as traversal', async () => {
    const path = await archive(zipBuilder().add('..\\evil.txt', 'pwned'));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'ZIP_REJECTED' });
    expect(await writtenPaths()).toEqual(['mods']);
  });

  it('refuses to extract into a directory that exists already and leaves it untouched', async () => {
    await mkdir(target);
    await writeFile(join(target, 'keep.txt'), 'mine');
    const path = await archive(zipBuilder().add('keep.txt', 'theirs'));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(join(target, 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('removes the half-written target when a later entry is refused', async () => {
    const path = await archive(zipBuilder().add('index.js', 'ok').withLyingSize('big.bin', 'x'.repeat(100), 10));
    await expect(extractArchiveSafely(path, target)).rejects.toMatchObject({ code: 'ZIP_REJECTED' });
    await expect(lstat(target)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
