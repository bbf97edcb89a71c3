import 'reflect-metadata';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Logger, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { CommandIo } from '../../../src/cli/command-io.js';
import { runDocsCommand } from '../../../src/cli/docs.command.js';
import { runFootprintCommand } from '../../../src/cli/footprint.command.js';
import { runFunctionsCommand } from '../../../src/cli/functions.command.js';
import { runProbeCommand } from '../../../src/cli/probe.command.js';
import { AppCoreModule } from '../../../src/modules/app-core/index.js';

/** Runs a `tb` command in process and captures what it printed. */
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

describe('tb functions, docs, footprint and probe (in process)', () => {
  let workspace: string;
  let env: Record<string, string>;
  let probeServer: INestApplication;

  beforeAll(async () => {
    Logger.overrideLogger(false);
    workspace = await mkdtemp(join(tmpdir(), 'tb-cli-e2e-'));
    const modsDir = join(workspace, 'mods');
    // An installed sample mod and a broken one: the broken one is reported, never fatal.
    await cp(resolve('examples/hello-mod'), join(modsDir, 'hello-mod'), { recursive: true });
    await writeFile(join(modsDir, 'hello-mod', 'package.json'), '{"type": "module"}');
    await mkdir(join(modsDir, 'broken'), { recursive: true });
    await writeFile(join(modsDir, 'broken', 'tb-mod.json'), JSON.stringify({ name: 'broken', version: '1.0.0' }));
    await writeFile(join(modsDir, 'broken', 'index.js'), 'export class Broken { static exports = { missing: {} }; }\n');
    await writeFile(join(modsDir, 'broken', 'package.json'), '{"type": "module"}');
    await mkdir(join(workspace, 'docs'));
    await writeFile(
      join(workspace, 'docs', 'guide.md'),
      '# Guide\n\nThe function registry keeps every mod function. #registry\n\n## Mods\n\nInstall mods with tb mods install.\n',
    );
    await mkdir(join(workspace, 'src'));
    await writeFile(
      join(workspace, 'src', 'greeter.ts'),
      '/** Greets people. */\nexport class Greeter {\n  /** Says hello. */\n  greet(name: string): string {\n    return name;\n  }\n}\n\nexport function undocumented(): void {}\n',
    );

    probeServer = await NestFactory.create(
      AppCoreModule.forRoot({
        appId: 'probe-server',
        dataDir: workspace,
        docsRoot: join(workspace, 'docs'),
        sourceRoots: [join(workspace, 'src')],
      }),
      { logger: false },
    );
    await probeServer.listen(0, '127.0.0.1');
    const { port } = probeServer.getHttpServer().address() as { port: number };
    env = {
      DATA_DIR: workspace,
      MODS_DIR: modsDir,
      APP_ID: 'cli-e2e',
      DOCS_ROOT: join(workspace, 'docs'),
      DOCS_SOURCE_ROOTS: join(workspace, 'src'),
      FUNCTION_TEST_TIMEOUT_SECONDS: '5',
      PLATFORM_BASE: '127.0.0.1',
      PLATFORM_BASE_PORT: String(port),
    };
  });

  afterAll(async () => {
    await probeServer?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it('lists the built-in functions and the installed mod as JSON', async () => {
    const result = await tb(runFunctionsCommand, ['list', '--json'], env);
    const keys = result.json().map((item: { key: string }) => item.key);
    expect(keys).toEqual(
      expect.arrayContaining(['core.version', 'core.footprint', 'docs.reader', 'hello.greet', 'hello.add']),
    );
  });

  it('reports a mod that fails to load on stderr and keeps the core running', async () => {
    const result = await tb(runFunctionsCommand, ['list'], env);
    expect([result.code, result.stderr]).toEqual([0, expect.stringContaining('mod broken not loaded')]);
    expect(result.stdout).toMatch(/^FUNCTION\s+PARAMETERS\s+HTTP\s+LEVEL\s+HELP/);
  });

  it('runs a function and prints its Result', async () => {
    const result = await tb(runFunctionsCommand, ['run', 'core.version', '--json'], env);
    expect([result.code, result.json().error, result.json().result.data.app_id]).toEqual([0, 'none', 'cli-e2e']);
  });

  it('runs a function that needs a logged-in caller as the trusted local caller', async () => {
    const result = await tb(
      runFunctionsCommand,
      ['run', 'core.footprint', '--kwargs', '{"update_tracking": false}', '--json'],
      env,
    );
    expect([result.code, result.json().error, typeof result.json().result.data.process.pid]).toEqual([
      0,
      'none',
      'number',
    ]);
  });

  it('passes --kwargs to a mod function', async () => {
    const result = await tb(runFunctionsCommand, ['run', 'hello.greet', '--kwargs', '{"name": "Ada"}', '--json'], env);
    expect(result.json().result.data).toBe('Hello, Ada!');
  });

  it('answers an unknown function with an InputError Result 404 and exit status 1', async () => {
    const result = await tb(runFunctionsCommand, ['run', 'nope.missing', '--json'], env);
    expect([result.code, result.json().error, result.json().info.exec_code]).toEqual([1, 'InputError', 404]);
  });

  it('tests the functions of a module and prints a table', async () => {
    const result = await tb(runFunctionsCommand, ['test', '--module', 'hello'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/hello\s+greet\s+1\s+1\s+0\s+0/);
  });

  it('exits non-zero when a tested function fails', async () => {
    const modsDir = join(workspace, 'mods-failing');
    await mkdir(join(modsDir, 'failing'), { recursive: true });
    await writeFile(join(modsDir, 'failing', 'tb-mod.json'), JSON.stringify({ name: 'failing', version: '1.0.0' }));
    await writeFile(
      join(modsDir, 'failing', 'index.js'),
      'export class F { static modName = "failing"; static exports = { boom: {} }; boom() { throw new Error("boom"); } }\n',
    );
    await writeFile(join(modsDir, 'failing', 'package.json'), '{"type": "module"}');
    const result = await tb(runFunctionsCommand, ['test', '--module', 'failing', '--json'], {
      ...env,
      MODS_DIR: modsDir,
    });
    expect([result.code, result.json().failed, result.json().functions[0].errors]).toEqual([1, true, 1]);
  });

  it('builds the docs index and finds a section by its words', async () => {
    const init = await tb(runDocsCommand, ['init', '--force', '--json'], env);
    expect(init.json()).toMatchObject({ sections: 2, elements: expect.any(Number) });
    const search = await tb(runDocsCommand, ['search', 'install', 'mods', '--json'], env);
    expect(search.json().sections[0].title).toBe('Mods');
  });

  it('looks up a code element by name with its signature', async () => {
    const result = await tb(runDocsCommand, ['lookup', 'Greeter', '--json'], env);
    expect(result.json().results[0]).toMatchObject({
      name: 'Greeter',
      element_type: 'class',
      docstring: expect.stringContaining('Greets people'),
    });
  });

  it('suggests documenting the exported function without a doc comment', async () => {
    const result = await tb(runDocsCommand, ['suggest', '--json'], env);
    expect(result.json().suggestions.map((item: { target: string }) => item.target)).toContain('undocumented');
  });

  it('prints the footprint of this process', async () => {
    const result = await tb(runFootprintCommand, ['--json'], env);
    expect(result.json().process.pid).toBe(process.pid);
  });

  it('pings the platform server found through PLATFORM_BASE and PLATFORM_BASE_PORT', async () => {
    const result = await tb(runProbeCommand, ['ping', '--json'], env);
    expect(result.json()).toMatchObject({
      base: `http://127.0.0.1:${env.PLATFORM_BASE_PORT}`,
      round_trips: 5,
      average_ms: expect.any(Number),
    });
  });

  it('asks the platform server for the geolocation of a loopback caller', async () => {
    const result = await tb(runProbeCommand, ['geo', '--json'], env);
    expect(result.json()).toMatchObject({ ip: '127.0.0.1', local: true });
  });

  it('fails the probe with exit status 1 when no server answers', async () => {
    const result = await tb(runProbeCommand, ['ping'], { ...env, PLATFORM_BASE_PORT: '1' });
    expect([result.code, result.stderr]).toEqual([1, expect.stringContaining('PLATFORM_REMOTE_BASE is not set')]);
  });
});
