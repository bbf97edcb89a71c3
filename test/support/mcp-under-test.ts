import 'reflect-metadata';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { createHttpApp } from '../../src/apps/create-http-app.js';
import { McpAppModule, mcpHttpAppOptions, secureMcpHttp } from '../../src/apps/mcp.app-module.js';
import { loadConfig, type PlatformConfig } from '../../src/config/config.js';
import { McpKeysService } from '../../src/modules/mcp/index.js';
import type { Backend } from './backends.js';

/** A test mod: slow, big, failing, admin-only and internal functions for the transport's limits and permissions. */
const LIMITS_MOD = `
export class LimitsMod {
  static modName = 'limits';
  static exports = {
    sleep: { api: true, helper: 'waits ms milliseconds', test: false },
    big: { api: true, helper: 'returns a string of n characters', test: false },
    fail: { api: true, helper: 'always throws', test: false },
    adminReport: { api: true, helper: 'admin only', level: -1, test: false },
    echo: { api: true, helper: 'returns its arguments', test: false },
    internalState: { api: false, helper: 'internal to the mod', test: false },
  };
  async sleep({ ms }) { await new Promise((r) => setTimeout(r, ms)); return { slept: ms }; }
  big({ n }) { return 'x'.repeat(n); }
  fail() { throw new Error('limits.fail failed on purpose'); }
  adminReport() { return { secret: 'admins only' }; }
  echo({ text }) { return { text }; }
  internalState() { return { internal: 'not for callers' }; }
}
`;

export interface McpUnderTest {
  baseUrl: string;
  app: INestApplication;
  config: PlatformConfig;
  workspace: string;
  modsDir: string;
  /** A key with these permissions (created directly in the store). */
  key(name: string, permissions: string[]): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts `tb mcp` in process on a free port, with a fresh workspace, docs, the limits mod and the backend's stores
 * (`noAuth`: as `tb mcp --no-auth`).
 */
export async function startMcp(
  backend: Backend,
  env: Record<string, string> = {},
  { noAuth = false }: { noAuth?: boolean } = {},
): Promise<McpUnderTest> {
  const workspace = await mkdtemp(join(tmpdir(), 'tb-mcp-e2e-'));
  const modsDir = join(workspace, 'mods');
  await mkdir(join(modsDir, 'limits'), { recursive: true });
  await writeFile(join(modsDir, 'limits', 'tb-mod.json'), JSON.stringify({ name: 'limits', version: '1.0.0' }));
  await writeFile(join(modsDir, 'limits', 'index.js'), LIMITS_MOD);
  await writeFile(join(modsDir, 'limits', 'package.json'), '{"type": "module"}');
  await mkdir(join(workspace, 'docs'));
  await writeFile(join(workspace, 'docs', 'guide.md'), '# Guide\n\nConnect Claude to the MCP transport.\n');
  const provisioned = await backend.provision();
  const config = loadConfig(
    {
      DATA_DIR: workspace,
      MODS_DIR: modsDir,
      DOCS_ROOT: join(workspace, 'docs'),
      DOCS_SOURCE_ROOTS: resolve('examples'),
      APP_ID: 'mcp-e2e',
      MCP_HOST: '127.0.0.1',
      MCP_PORT: '0',
      MCP_MODS_RESCAN_SECONDS: '0',
      // The Python sandbox costs a core for seconds at start (it loads an interpreter and precompiles the standard
      // library); the suites that test python_execute ask for it.
      MCP_PYTHON: 'off',
      ...provisioned.env,
      ...env,
    },
    { services: ['mcp'] },
  );
  const app = await createHttpApp(McpAppModule.forRoot(config, { mode: 'http', noAuth }), {
    ...mcpHttpAppOptions(config),
    logger: ['error'],
  });
  secureMcpHttp(app, config);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const keys = app.get(McpKeysService);
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    app,
    config,
    workspace,
    modsDir,
    key: async (name, permissions) => (await keys.create(name, permissions)).key,
    async close() {
      await app.close();
      await provisioned.dispose();
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** Installs the sample hello mod into a running server's MODS_DIR (as `tb mods install` would leave it). */
export async function installHelloMod(modsDir: string): Promise<void> {
  await cp(resolve('examples/hello-mod'), join(modsDir, 'hello-mod'), { recursive: true });
  await writeFile(join(modsDir, 'hello-mod', 'package.json'), '{"type": "module"}');
}
