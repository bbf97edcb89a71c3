import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceFileAtomically, writeFileAtomically } from './atomic-write.js';

describe('atomic write', () => {
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'atomic-write-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('writes a new file, creating its directory', async () => {
    const path = join(directory, 'nested', 'deeper', 'file.json');
    await writeFileAtomically(path, '{"a":1}');
    expect(await readFile(path, 'utf8')).toBe('{"a":1}');
  });

  it('replaces an existing file and leaves no temporary file behind', async () => {
    const path = join(directory, 'file.txt');
    await writeFile(path, 'old');
    await writeFileAtomically(path, 'new');
    expect(await readFile(path, 'utf8')).toBe('new');
    expect(await readdir(directory)).toEqual(['file.txt']);
  });

  it('applies the mode it is given', async () => {
    const path = join(directory, 'mode.txt');
    await writeFileAtomically(path, 'x', { mode: 0o600 });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('keeps the old file and removes the temporary one when filling fails', async () => {
    const path = join(directory, 'file.txt');
    await writeFile(path, 'old');
    const failure = replaceFileAtomically(path, async (temporary) => {
      await writeFile(temporary, 'half');
      throw new Error('disk full');
    });
    await expect(failure).rejects.toThrow('disk full');
    expect(await readFile(path, 'utf8')).toBe('old');
    expect(await readdir(directory)).toEqual(['file.txt']);
  });

  it('never shows a reader a partly written file', async () => {
    const path = join(directory, 'file.txt');
    await writeFile(path, 'a'.repeat(1_000_000));
    let writing = true;
    const seen = new Set<number>();
    const reader = (async () => {
      while (writing) seen.add((await readFile(path)).length);
    })();
    for (let round = 0; round < 20; round += 1)
      await writeFileAtomically(path, (round % 2 ? 'a' : 'b').repeat(1_000_000));
    writing = false;
    await reader;
    expect([...seen]).toEqual([1_000_000]);
  });

  (process.platform === 'linux' ? it : it.skip)(
    'fails, instead of hanging, where the directory cannot be created',
    async () => {
      await expect(writeFileAtomically('/proc/toolbox-not-writable/file.txt', 'x')).rejects.toMatchObject({
        code: 'ENOENT',
      });
    },
    5000,
  );
});
