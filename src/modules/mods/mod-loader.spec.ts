import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FunctionRegistry } from '../app-core/function-registry.js';
import { LOCAL_CALLER } from '../app-core/caller.js';
import { FunctionRunner } from '../app-core/function-runner.js';
import type { Result } from '../app-core/result.js';
import { applyStaticDescriptor, loadInstalledMods, modClassesOf } from './mod-loader.js';
import { ModsLockFile } from './mods-lock-file.js';

const HELLO_MOD = resolve('examples/hello-mod');
const quietLogger = { log: () => undefined, error: () => undefined };

/** Writes a mod directory the way the installer leaves it (manifest, entry, package.json type module). */
async function writeMod(
  modsDir: string,
  name: string,
  source: string,
  manifest: Record<string, unknown> = {},
): Promise<void> {
  const directory = join(modsDir, name);
  await mkdir(directory, { recursive: true });
  await writeFile(
    join(directory, 'tb-mod.json'),
    JSON.stringify({ name, version: '1.0.0', entry: 'index.js', ...manifest }),
  );
  await writeFile(join(directory, 'index.js'), source);
  await writeFile(join(directory, 'package.json'), '{"type": "module"}');
}

describe('loadInstalledMods', () => {
  let modsDir: string;
  let registry: FunctionRegistry;
  let runner: FunctionRunner;

  beforeEach(async () => {
    modsDir = await mkdtemp(join(tmpdir(), 'mod-loader-'));
    registry = new FunctionRegistry({ appId: 'loader-spec', logger: quietLogger });
    runner = new FunctionRunner(registry, { dataDir: modsDir });
  });

  afterEach(async () => {
    await rm(modsDir, { recursive: true, force: true });
  });

  it('registers the sample mod written with the decorator-free form', async () => {
    await cp(HELLO_MOD, join(modsDir, 'hello-mod'), { recursive: true });
    await writeFile(join(modsDir, 'hello-mod', 'package.json'), '{"type": "module"}');
    const report = await loadInstalledMods({ modsDir, registry, runner });
    expect(report.loaded.map((mod) => mod.functions)).toEqual([
      ['hello.greet', 'hello.add', 'hello.platform', 'hello.started'],
    ]);
    const outcome = (await runner.aRunFunction('hello.greet', {
      kwargs: { name: 'Ada' },
      caller: LOCAL_CALLER,
    })) as Result;
    expect(outcome.get()).toBe('Hello, Ada!');
  });

  it('keeps the export options of the static descriptor', async () => {
    await cp(HELLO_MOD, join(modsDir, 'hello-mod'), { recursive: true });
    await writeFile(join(modsDir, 'hello-mod', 'package.json'), '{"type": "module"}');
    await loadInstalledMods({ modsDir, registry, runner });
    const greet = registry.list().find((item) => item.key === 'hello.greet');
    expect([greet?.options.api, greet?.options.helper, greet?.parameters]).toEqual([
      true,
      'says hello to someone',
      ['name'],
    ]);
  });

  it('reports a mod whose entry throws on import and still loads the others', async () => {
    await writeMod(modsDir, 'broken', 'throw new Error("cannot start");\n');
    await writeMod(
      modsDir,
      'fine',
      'export class Fine { static modName = "fine"; static exports = { ping: {} }; ping() { return "pong"; } }\n',
    );
    const report = await loadInstalledMods({ modsDir, registry, runner });
    expect(report.failed).toEqual([expect.objectContaining({ name: 'broken', error: 'cannot start' })]);
    expect(report.loaded.map((mod) => mod.name)).toEqual(['fine']);
  });

  it('skips a mod whose function key is taken and registers none of its functions', async () => {
    await writeMod(
      modsDir,
      'first',
      'export class A { static modName = "same"; static exports = { f: {} }; f() { return 1; } }\n',
    );
    await writeMod(
      modsDir,
      'second',
      'export class B { static modName = "same"; static exports = { g: {}, f: {} }; f() { return 2; } g() { return 3; } }\n',
    );
    const report = await loadInstalledMods({ modsDir, registry, runner });
    expect(report.failed[0]).toMatchObject({ name: 'second', error: expect.stringContaining('registered twice') });
    expect(registry.has('same.g')).toBe(false);
  });

  it('skips a mod that needs another platform version', async () => {
    await writeMod(modsDir, 'future', 'export class F { static exports = { f: {} }; f() {} }\n', {
      toolbox_version: '>=9.0.0',
    });
    const report = await loadInstalledMods({ modsDir, registry, runner, hostVersion: '0.1.0' });
    expect(report.failed[0].error).toMatch(/needs platform version >=9.0.0/);
  });

  it('reports a module that exports no mod class', async () => {
    await writeMod(modsDir, 'empty', 'export const value = 1;\n');
    const report = await loadInstalledMods({ modsDir, registry, runner });
    expect(report.failed[0].error).toMatch(/exports no mod class/);
  });

  it('passes the context to the mod class and runs initial functions on request', async () => {
    await writeMod(
      modsDir,
      'ctx',
      'export let seen; export class C { static modName = "ctx"; static exports = { boot: { initial: true } }; constructor(context) { this.context = context; } boot() { seen = this.context.manifest.name; } }\n',
    );
    await loadInstalledMods({ modsDir, registry, runner, runInitial: true });
    const module = await import(join(modsDir, 'ctx', 'index.js'));
    expect(module.seen).toBe('ctx');
  });

  it('skips the directory of a version the lock file no longer names', async () => {
    await writeMod(
      modsDir,
      'twice@1.0.0',
      'export class Old { static modName = "twice"; static exports = { v: {} }; v() { return 1; } }\n',
      { name: 'twice', version: '1.0.0' },
    );
    await writeMod(
      modsDir,
      'twice@2.0.0',
      'export class New { static modName = "twice"; static exports = { v: {} }; v() { return 2; } }\n',
      { name: 'twice', version: '2.0.0' },
    );
    await new ModsLockFile(modsDir).record({
      name: 'twice',
      version: '2.0.0',
      checksum_sha256: 'a'.repeat(64),
      registry: 'http://registry',
      installed_at: '2025-01-01T00:00:00Z',
      entry: 'index.js',
      dependencies: [],
    });
    const report = await loadInstalledMods({ modsDir, registry, runner });
    expect([report.loaded.map((mod) => mod.version), report.failed]).toEqual([['2.0.0'], []]);
  });

  it('loads only the mods installed since, given the directories already loaded (a running server)', async () => {
    await writeMod(modsDir, 'first', 'export class First { static exports = { one: {} }; one() { return 1; } }');
    const before = await loadInstalledMods({ modsDir, registry, runner });
    await writeMod(modsDir, 'second', 'export class Second { static exports = { two: {} }; two() { return 2; } }');
    const after = await loadInstalledMods({
      modsDir,
      registry,
      runner,
      skipDirectories: new Set(before.loaded.map((mod) => mod.directory)),
    });
    expect(after).toEqual({
      loaded: [expect.objectContaining({ name: 'second', functions: ['Second.two'] })],
      failed: [],
    });
    expect(registry.has('First.one')).toBe(true);
  });

  it('answers an empty report when the mods directory does not exist', async () => {
    expect(await loadInstalledMods({ modsDir: join(modsDir, 'missing'), registry })).toEqual({
      loaded: [],
      failed: [],
    });
  });
});

describe('applyStaticDescriptor', () => {
  it('refuses a descriptor naming a method the class lacks', () => {
    class Broken {
      static exports = { missing: {} };
    }
    expect(() => applyStaticDescriptor(Broken)).toThrow(/"missing", which is not a method/);
  });

  it('accepts the array form with a method name per entry', () => {
    class Listed {
      static modName = 'listed';
      static exports = [{ method: 'run', name: 'go' }];
      run() {
        return 1;
      }
    }
    const registry = new FunctionRegistry({ appId: 'spec', logger: quietLogger });
    registry.registerInstances(modClassesOf({ Listed }).map((ModClass) => new ModClass(undefined as never) as object));
    expect(registry.has('listed.go')).toBe(true);
  });

  it('ignores exported classes that are not mods', () => {
    class Plain {
      run() {
        return 1;
      }
    }
    expect(modClassesOf({ Plain, value: 3 })).toEqual([]);
  });
});
