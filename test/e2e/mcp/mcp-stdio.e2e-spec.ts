import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Logger } from '@nestjs/common';
import type { CommandIo } from '../../../src/cli/command-io.js';
import { runMcpCommand } from '../../../src/cli/mcp.command.js';
import { backends } from '../../support/backends.js';
import { compiledTb } from '../../support/manager-under-test.js';

/**
 * `tb mcp --stdio` as a desktop client runs it: a separate process speaking MCP on stdin/stdout, the CLI compiled
 * once per file (compiledTb) and spawned with node.
 */
let mainJs: string;

beforeAll(async () => {
  Logger.overrideLogger(false);
  mainJs = await compiledTb();
}, 180_000);

describe.each(backends())('tb mcp --stdio on $name', (backend) => {
  let workspace: string;
  let env: Record<string, string>;
  let dispose: () => Promise<void>;
  let readKey: string;
  const clients: Client[] = [];

  async function tb(argv: string[]) {
    const out: string[] = [];
    const io: CommandIo = { out: (text) => out.push(text), err: () => undefined, env };
    const code = await runMcpCommand(argv, io);
    return { code, stdout: out.join('\n') };
  }

  async function connect(key: string): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [mainJs, 'mcp', '--stdio'],
      env: { ...env, PATH: process.env.PATH ?? '', MCP_API_KEY: key },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-e2e', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);
    return client;
  }

  beforeAll(async () => {
    workspace = await mkdtemp(join(tmpdir(), 'tb-mcp-stdio-'));
    await mkdir(join(workspace, 'docs'));
    await writeFile(join(workspace, 'docs', 'guide.md'), '# Guide\n\nstdio works.\n');
    const provisioned = await backend.provision();
    dispose = provisioned.dispose;
    env = {
      DATA_DIR: workspace,
      DOCS_ROOT: join(workspace, 'docs'),
      APP_ID: 'mcp-stdio-e2e',
      MCP_MODS_RESCAN_SECONDS: '0',
      ...provisioned.env,
    };
    const created = await tb(['keys', 'create', 'desktop', '--permissions', 'read']);
    expect(created.code).toBe(0);
    // The first key prints ready-to-paste client configurations.
    expect(created.stdout).toContain('claude_desktop_config.json');
    expect(created.stdout).toContain('"--stdio"');
    readKey = /tb_mcp_[0-9a-f]{32}/.exec(created.stdout)![0];
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await dispose?.();
    await rm(workspace, { recursive: true, force: true });
  });

  it('initializes, lists the tools the key may use and calls one', async () => {
    const client = await connect(readKey);
    expect(client.getServerVersion()).toMatchObject({ name: 'toolbox-mcp' });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['toolbox_execute', 'docs_reader', 'core_ping']));
    expect(names).not.toContain('python_execute');
    expect(names).not.toContain('docs_writer');
    const pong = await client.callTool({ name: 'core_ping', arguments: {} });
    expect(pong.isError).toBe(false);
    expect((pong.content as Array<{ text: string }>)[0].text).toContain('pong');
    const resources = await client.listResources();
    expect(resources.resources.map((resource) => resource.uri)).toContain('toolbox://status');
  });

  it('refuses to start with an unknown key', async () => {
    await expect(connect(`tb_mcp_${'a'.repeat(32)}`)).rejects.toThrow();
  });
});
