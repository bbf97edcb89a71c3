import 'reflect-metadata';
import { cp, mkdtemp, readFile, rm, writeFile, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import type { CommandIo } from '../../../src/cli/command-io.js';
import { runFunctionsCommand } from '../../../src/cli/functions.command.js';
import { runModsCommand } from '../../../src/cli/mods.command.js';
import { ModsClient } from '../../../src/modules/mods/index.js';
import { backends } from '../../support/backends.js';
import { publisherFactory } from '../../support/registry-fixtures.js';
import { startRegistry, type RegistryUnderTest } from '../../support/registry-under-test.js';

async function tb(
  command: (argv: string[], io: CommandIo) => Promise<number>,
  argv: string[],
  env: Record<string, string>,
) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await command(argv, { out: (text) => out.push(text), err: (text) => err.push(text), env });
  return { code, stdout: out.join('\n'), stderr: err.join('\n'), json: () => JSON.parse(out.join('\n')) };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A copy of a mod directory with its manifest changed. */
async function modVariant(
  workspace: string,
  source: string,
  changes: Record<string, unknown>,
  files: Record<string, string> = {},
): Promise<string> {
  const directory = await mkdtemp(join(workspace, 'variant-'));
  await cp(source, directory, { recursive: true });
  const manifest = JSON.parse(await readFile(join(directory, 'tb-mod.json'), 'utf8'));
  await writeFile(join(directory, 'tb-mod.json'), JSON.stringify({ ...manifest, ...changes }));
  for (const [name, content] of Object.entries(files)) await writeFile(join(directory, name), content);
  return directory;
}

describe.each(backends())('mods published to and installed from the registry on $name', (backend) => {
  let registry: RegistryUnderTest;
  let workspace: string;
  let env: Record<string, string>;
  let token: string;
  const sample = resolve('examples/hello-mod');

  beforeAll(async () => {
    Logger.overrideLogger(false);
    registry = await startRegistry(backend);
    workspace = await mkdtemp(join(tmpdir(), 'tb-mods-e2e-'));
    const publisher = await publisherFactory(registry);
    token = registry.token(publisher.user);
    env = {
      DATA_DIR: workspace,
      MODS_DIR: join(workspace, 'mods'),
      TB_REGISTRY_URL: registry.baseUrl,
      APP_ID: 'mods-e2e',
    };
  });

  afterAll(async () => {
    await registry?.close();
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  it('publishes the sample mod, creating its package', async () => {
    const result = await tb(runModsCommand, ['publish', sample, '--token', token, '--json'], env);
    expect([result.code, result.json()]).toEqual([
      0,
      expect.objectContaining({ package: 'hello-mod', version: '1.0.0', created: true }),
    ]);
    const detail = await registry.api.get('/api/v1/packages/hello-mod');
    expect(detail.body.versions[0]).toMatchObject({ version: '1.0.0', toolbox_version: '>=0.1.0 <1' });
  });

  it('installs it with tb mods install and records it in the lock file', async () => {
    const result = await tb(runModsCommand, ['install', 'hello-mod@^1', '--json'], env);
    expect(result.json().mods).toEqual([
      { name: 'hello-mod', version: '1.0.0', status: 'installed', previous_version: null },
    ]);
    const lock = JSON.parse(await readFile(join(env.MODS_DIR, 'tb-mods.lock.json'), 'utf8'));
    const published = await registry.api.get('/api/v1/packages/hello-mod/versions/1.0.0', {
      accept: 'application/json',
    });
    expect(lock.mods['hello-mod']).toMatchObject({
      version: '1.0.0',
      checksum_sha256: published.body.checksum_sha256,
      registry: registry.baseUrl,
    });
  });

  it('runs a function of the installed mod through the core and returns its Result', async () => {
    const result = await tb(runFunctionsCommand, ['run', 'hello.add', '--args', '[2, 40]', '--json'], env);
    expect([result.code, result.json()]).toEqual([
      0,
      expect.objectContaining({ error: 'none', result: expect.objectContaining({ data: 42 }) }),
    ]);
  });

  it('gives the mod the core to call other functions through', async () => {
    const result = await tb(runFunctionsCommand, ['run', 'hello.platform', '--json'], env);
    expect(result.json().result.data).toEqual({ mod: 'hello-mod@1.0.0', platform: expect.any(String) });
  });

  it('lists the installed mod', async () => {
    const result = await tb(runModsCommand, ['list', '--json'], env);
    expect(result.json()).toEqual([expect.objectContaining({ name: 'hello-mod', version: '1.0.0', present: true })]);
  });

  it('leaves an installed mod unchanged when installed again', async () => {
    const result = await tb(runModsCommand, ['install', 'hello-mod', '--json'], env);
    expect(result.json().mods[0].status).toBe('unchanged');
  });

  it('updates to a newer version found through the batch version check', async () => {
    const newer = await modVariant(
      workspace,
      sample,
      { version: '1.1.0' },
      { 'index.js': (await readFile(join(sample, 'index.js'), 'utf8')).replace('Hello, ', 'Hi, ') },
    );
    expect((await tb(runModsCommand, ['publish', newer, '--token', token], env)).code).toBe(0);
    const update = await tb(runModsCommand, ['update', '--json'], env);
    expect(update.json().updated).toEqual([{ name: 'hello-mod', from: '1.0.0', to: '1.1.0' }]);
    expect([
      await exists(join(env.MODS_DIR, 'hello-mod@1.0.0')),
      await exists(join(env.MODS_DIR, 'hello-mod@1.1.0')),
    ]).toEqual([false, true]);
    const run = await tb(runFunctionsCommand, ['run', 'hello.greet', '--kwargs', '{"name": "Ada"}', '--json'], env);
    expect(run.json().result.data).toBe('Hi, Ada!');
  });

  it('installs the dependencies a mod declares', async () => {
    const base = await modVariant(
      workspace,
      sample,
      { name: 'base-mod', version: '2.0.0' },
      {
        'index.js':
          'export class Base { static modName = "base"; static exports = { id: {} }; id(value) { return value; } }\n',
      },
    );
    const user = await modVariant(
      workspace,
      sample,
      { name: 'uses-base', version: '1.0.0', dependencies: ['base-mod@^2'] },
      {
        'index.js':
          'export class User { static modName = "user"; static exports = { twice: {} }; constructor(context) { this.app = context.app; } async twice(value) { return 2 * (await this.app.aRunAny("base.id", { args: [value] })); } }\n',
      },
    );
    await tb(runModsCommand, ['publish', base, '--token', token], env);
    await tb(runModsCommand, ['publish', user, '--token', token], env);
    const install = await tb(runModsCommand, ['install', 'uses-base', '--json'], env);
    expect(
      install
        .json()
        .mods.map((mod: { name: string }) => mod.name)
        .sort(),
    ).toEqual(['base-mod', 'uses-base']);
    const run = await tb(runFunctionsCommand, ['run', 'user.twice', '--args', '[21]', '--json'], env);
    expect(run.json().result.data).toBe(42);
  });

  it("refuses a download whose SHA-256 differs from the registry's and installs nothing", async () => {
    const modsDir = join(workspace, 'tampered-mods');
    const tampering: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith('/api/v1/resolve')) return response;
      const body = (await response.json()) as { resolved: Record<string, { checksum_sha256: string }> };
      body.resolved['hello-mod'].checksum_sha256 = '0'.repeat(64);
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = new ModsClient({ registryUrl: registry.baseUrl, modsDir, hostVersion: '0.1.0', fetch: tampering });
    await expect(client.install('hello-mod')).rejects.toThrow(/SHA-256 mismatch/);
    expect([await client.list(), await exists(join(modsDir, 'hello-mod@1.1.0'))]).toEqual([[], false]);
  });

  it('reports a requirement the registry cannot resolve with exit status 1', async () => {
    const result = await tb(runModsCommand, ['install', 'hello-mod@^9'], env);
    expect([result.code, result.stderr]).toEqual([1, expect.stringContaining('cannot resolve hello-mod@^9')]);
  });

  it('refuses to publish without a token', async () => {
    const result = await tb(runModsCommand, ['publish', sample], env);
    expect([result.code, result.stderr]).toEqual([1, expect.stringContaining('publishing needs a token')]);
  });

  it('removes an installed mod and its lock entry', async () => {
    const result = await tb(runModsCommand, ['remove', 'hello-mod'], env);
    expect(result.stdout).toBe('removed hello-mod@1.1.0');
    expect([
      await exists(join(env.MODS_DIR, 'hello-mod@1.1.0')),
      (await tb(runModsCommand, ['list', '--json'], env)).json().map((mod: { name: string }) => mod.name),
    ]).toEqual([false, ['base-mod', 'uses-base']]);
  });
});
