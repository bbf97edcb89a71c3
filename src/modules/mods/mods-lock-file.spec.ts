import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCK_FILE_NAME, ModsLockFile, type LockedMod } from './mods-lock-file.js';

const mod = (name: string, version = '1.0.0'): LockedMod => ({
  name,
  version,
  checksum_sha256: 'a'.repeat(64),
  registry: 'http://127.0.0.1:4025',
  installed_at: '2025-01-01T00:00:00.000Z',
  entry: 'index.js',
  dependencies: [],
});

describe('ModsLockFile', () => {
  let modsDir: string;

  beforeEach(async () => {
    modsDir = await mkdtemp(join(tmpdir(), 'mods-lock-'));
  });

  afterEach(async () => {
    await rm(modsDir, { recursive: true, force: true });
  });

  it('reads a missing lock file as no mods', async () => {
    expect(await new ModsLockFile(modsDir).list()).toEqual([]);
  });

  it('records mods and lists them sorted by name', async () => {
    const lock = new ModsLockFile(modsDir);
    await lock.record(mod('zeta'));
    await lock.record(mod('alpha'));
    expect((await new ModsLockFile(modsDir).list()).map((item) => item.name)).toEqual(['alpha', 'zeta']);
  });

  it('replaces the record of a mod installed again', async () => {
    const lock = new ModsLockFile(modsDir);
    await lock.record(mod('hello', '1.0.0'));
    await lock.record(mod('hello', '1.1.0'));
    expect((await lock.list()).map((item) => item.version)).toEqual(['1.1.0']);
  });

  it('removes a mod and returns its record', async () => {
    const lock = new ModsLockFile(modsDir);
    await lock.record(mod('hello'));
    expect((await lock.remove('hello'))?.version).toBe('1.0.0');
    expect(await lock.list()).toEqual([]);
  });

  it('keeps every record when writes from one process overlap', async () => {
    const lock = new ModsLockFile(modsDir);
    await Promise.all(['a', 'b', 'c', 'd'].map((name) => lock.record(mod(name))));
    expect((await lock.list()).map((item) => item.name)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('writes the wire fields and leaves no temporary file behind', async () => {
    await new ModsLockFile(modsDir).record(mod('hello'));
    const data = JSON.parse(await readFile(join(modsDir, LOCK_FILE_NAME), 'utf8'));
    expect(Object.keys(data.mods.hello).sort()).toEqual([
      'checksum_sha256',
      'dependencies',
      'entry',
      'installed_at',
      'name',
      'registry',
      'version',
    ]);
    expect(await readdir(modsDir)).toEqual([LOCK_FILE_NAME]);
  });

  it('refuses a corrupt lock file with a message naming it', async () => {
    await writeFile(join(modsDir, LOCK_FILE_NAME), '{not json');
    await expect(new ModsLockFile(modsDir).list()).rejects.toThrow(LOCK_FILE_NAME);
  });
});
