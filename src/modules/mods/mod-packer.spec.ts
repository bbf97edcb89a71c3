import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inspectZip } from '../../packaging/zip-inspector.js';
import { packModDirectory } from './mod-packer.js';
import { extractArchiveSafely } from './safe-extractor.js';

describe('packModDirectory', () => {
  let workspace: string;

  beforeEach(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'mod-packer-'));
  });

  afterEach(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it('packs the sample mod into an archive the registry inspection accepts', async () => {
    const packed = await packModDirectory(resolve('examples/hello-mod'));
    await writeFile(join(workspace, 'hello.zip'), packed.archive);
    const inspection = await inspectZip(join(workspace, 'hello.zip'));
    expect(inspection.entries.map((entry) => entry.name)).toEqual(['README.md', 'index.js', 'tb-mod.json']);
  });

  it('packs the same sources to the same bytes', async () => {
    const first = await packModDirectory(resolve('examples/hello-mod'));
    const second = await packModDirectory(resolve('examples/hello-mod'));
    expect(first.archive.equals(second.archive)).toBe(true);
  });

  it('round-trips nested files through the safe extractor', async () => {
    const source = join(workspace, 'mod');
    await mkdir(join(source, 'lib'), { recursive: true });
    await writeFile(
      join(source, 'tb-mod.json'),
      JSON.stringify({ name: 'nested', version: '1.0.0', entry: 'lib/main.mjs' }),
    );
    await writeFile(join(source, 'lib', 'main.mjs'), 'export class M {}\n');
    const packed = await packModDirectory(source);
    await writeFile(join(workspace, 'nested.zip'), packed.archive);
    await extractArchiveSafely(join(workspace, 'nested.zip'), join(workspace, 'out'));
    expect(await readFile(join(workspace, 'out', 'lib', 'main.mjs'), 'utf8')).toBe('export class M {}\n');
  });

  it('refuses a directory holding a symbolic link', async () => {
    const source = join(workspace, 'mod');
    await mkdir(source);
    await writeFile(join(source, 'tb-mod.json'), JSON.stringify({ name: 'linked', version: '1.0.0' }));
    await writeFile(join(source, 'index.js'), 'export class M {}\n');
    await symlink('/etc/passwd', join(source, 'passwd'));
    await expect(packModDirectory(source)).rejects.toThrow(/passwd is a symbolic link/);
  });

  it('refuses a manifest whose entry is not in the directory', async () => {
    const source = join(workspace, 'mod');
    await mkdir(source);
    await writeFile(
      join(source, 'tb-mod.json'),
      JSON.stringify({ name: 'noentry', version: '1.0.0', entry: 'main.js' }),
    );
    await expect(packModDirectory(source)).rejects.toThrow(/entry "main.js"/);
  });

  it('refuses a directory without tb-mod.json', async () => {
    await expect(packModDirectory(workspace)).rejects.toThrow(/has no tb-mod.json/);
  });
});
