import { NestFactory } from '@nestjs/core';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfig, type PlatformConfig } from '../config/config.js';
import { McpAppModule, mcpHttpAppOptions, secureMcpHttp } from '../apps/mcp.app-module.js';
import { createHttpApp, listen } from '../apps/create-http-app.js';
import { UsageError } from '../common/errors.js';
import { migrateDatabase } from '../database/migrate.js';
import {
  McpDoorsService,
  McpKeysService,
  NO_AUTH_PRINCIPAL,
  createMcpServer,
  type McpKeyInfo,
  type McpPrincipal,
} from '../modules/mcp/index.js';
import { parseCommandArgs, portFlag } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

const USAGE = `usage: tb mcp [--port 8765] [--host 127.0.0.1] [--no-auth] [--stdio] [--data-dir DIR]
       tb mcp keys create NAME [--permissions read,execute] | list [--json] | revoke NAME`;

/** `tb mcp`: the MCP transport over HTTP (REST door and /mcp) or stdio, and `tb mcp keys`. */
export async function runMcpCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  if (argv[0] === 'keys') return runKeysCommand(argv.slice(1), io);
  const { values } = parseCommandArgs(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      'no-auth': { type: 'boolean', default: false },
      stdio: { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
    },
    { allowPositionals: false },
  );
  const loaded = loadConfig(io.env, { services: ['mcp'], dataDir: values['data-dir'] });
  const port = portFlag(values.port);
  const config: PlatformConfig = {
    ...loaded,
    mcp: { ...loaded.mcp, host: values.host ?? loaded.mcp.host, port: port ?? loaded.mcp.port },
  };
  const noAuth = values['no-auth'];
  if (values.stdio) return serveStdio(config, io, noAuth);
  if (noAuth && !['127.0.0.1', 'localhost', '::1'].includes(config.mcp.host))
    throw new UsageError('--no-auth is only allowed on a loopback host (127.0.0.1, localhost, ::1)');
  // Without keys the origin rule is all that keeps a foreign web page from calling tools as an admin.
  if (noAuth && config.mcp.corsOrigins.includes('*'))
    throw new UsageError('--no-auth cannot be combined with MCP_CORS_ORIGINS=*: every web page could call tools');
  await migrateDatabase(config.database);
  const app = await createHttpApp(McpAppModule.forRoot(config, { mode: 'http', noAuth }), mcpHttpAppOptions(config));
  secureMcpHttp(app, config);
  const url = await listen(app, config.mcp, 'Mcp');
  io.out(
    `MCP transport ready at ${url}/mcp (REST door: ${url}/mcp/tools/list, docs: ${url}/api/docs${noAuth ? '; NO AUTH' : ''})`,
  );
  return -1;
}

/**
 * `tb mcp --stdio`: one MCP server on stdin/stdout for desktop clients that launch a command. The key comes
 * from MCP_API_KEY and is checked like on HTTP; nothing but the protocol is written to stdout.
 */
async function serveStdio(config: PlatformConfig, io: CommandIo, noAuth: boolean): Promise<number> {
  await migrateDatabase(config.database);
  const app = await NestFactory.createApplicationContext(McpAppModule.forRoot(config, { mode: 'stdio', noAuth }), {
    logger: false,
  });
  await app.init();
  const doors = app.get(McpDoorsService);
  let principal: McpPrincipal;
  try {
    principal = noAuth ? NO_AUTH_PRINCIPAL : await app.get(McpKeysService).verify(io.env.MCP_API_KEY?.trim());
  } catch (error) {
    await app.close();
    io.err(`tb mcp --stdio: ${(error as Error).message} (set MCP_API_KEY to a key from "tb mcp keys create")`);
    return 1;
  }
  const server = createMcpServer(doors.tools, principal, config.version, doors.sessionCount);
  const notify = () => void server.sendToolListChanged().catch(() => undefined);
  doors.tools.on('toolsChanged', notify);
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  await closed;
  doors.tools.off('toolsChanged', notify);
  await app.close();
  return 0;
}

async function runKeysCommand(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    permissions: { type: 'string' },
    json: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
  });
  const [action, name] = positionals;
  if (!(action === 'list' && !name) && !((action === 'create' || action === 'revoke') && name))
    throw new UsageError(USAGE);
  const config = loadConfig(io.env, { services: ['mcp'], dataDir: values['data-dir'] });
  await migrateDatabase(config.database);
  // Managing keys serves no tool: no Python sandbox to start.
  const keysOnly = { ...config, mcp: { ...config.mcp, python: null } };
  const app = await NestFactory.createApplicationContext(McpAppModule.forRoot(keysOnly, { mode: 'http' }), {
    logger: ['error'],
  });
  try {
    const keys = app.get(McpKeysService);
    return await reportingDomainErrors(io, async () => {
      if (action === 'list') {
        const list = await keys.list();
        io.out(values.json ? JSON.stringify(list) : formatKeys(list));
        return 0;
      }
      if (action === 'revoke') {
        await keys.revoke(name);
        io.out(`Revoked MCP key ${name}`);
        return 0;
      }
      const firstKey = (await keys.count()) === 0;
      const permissions = values.permissions?.split(',').map((permission) => permission.trim()) ?? ['read'];
      const { key, info } = await keys.create(name, permissions);
      io.out(`Created MCP key ${info.name} (${info.permissions.join(', ')}):\n\n  ${key}\n`);
      io.out('Store it now: it is shown once and only its SHA-256 hash is kept.');
      if (firstKey) io.out(`\n${clientConfigurations(config, key)}`);
      return 0;
    });
  } finally {
    await app.close();
  }
}

function formatKeys(keys: McpKeyInfo[]): string {
  if (keys.length === 0) return 'no MCP keys (create one: tb mcp keys create NAME --permissions read,execute)';
  const rows = keys.map((key) => [
    key.name,
    `${key.key_prefix}…`,
    key.permissions.join(','),
    key.created_at,
    key.last_used_at ?? '-',
    String(key.usage_count),
  ]);
  const header = ['NAME', 'KEY', 'PERMISSIONS', 'CREATED', 'LAST USED', 'USES'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** Ready-to-paste client configurations, printed when the first key is created. */
export function clientConfigurations(config: PlatformConfig, key: string): string {
  const url = `http://${config.mcp.host === '0.0.0.0' ? '127.0.0.1' : config.mcp.host}:${config.mcp.port}/mcp`;
  const desktop = {
    mcpServers: { toolbox: { command: 'tb', args: ['mcp', '--stdio'], env: { MCP_API_KEY: key } } },
  };
  return [
    'Claude Desktop (claude_desktop_config.json):',
    JSON.stringify(desktop, null, 2),
    '',
    'Claude Code:',
    `  claude mcp add --transport http toolbox ${url} --header "Authorization: Bearer ${key}"`,
    '',
    'Cursor (.cursor/mcp.json):',
    JSON.stringify({ mcpServers: { toolbox: { url, headers: { Authorization: `Bearer ${key}` } } } }, null, 2),
  ].join('\n');
}
