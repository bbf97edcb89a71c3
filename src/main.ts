#!/usr/bin/env node
import 'reflect-metadata';
import { ConfigError } from './config/config.js';
import { UsageError } from './common/errors.js';
import { processIo, type CommandIo } from './cli/command-io.js';

const HELP = `tb — Toolbox Platform command-line tool

  tb up [--port N] [--data-dir DIR] [--services LIST] [--no-gateway|--no-mcp|--no-manager|--no-registry]
                                             the whole platform on its embedded defaults (npm start)
  tb registry [--port N] [--data-dir DIR]    start the package registry (default port 4025)
  tb registry admins grant|revoke USER_ID    make a platform user a registry admin, or undo it
  tb gateway [--port N] [--data-dir DIR]     start the model gateway (default port 4000, docs/gateway.md)
  tb db migrate|status                       apply pending database migrations / show whether any are pending
  tb token --user ID --username NAME [--email E] [--admin] [--ttl 1h]
                                             mint a JWT with the configured secret
  tb users create --email E [--username N] [--level L] | list [--json] | set-level ID|EMAIL LEVEL
                                             WorkerAuth's users (levels: -1 admin, 1 logged in, 2 trusted)
  tb delta create OLD.zip NEW.zip PATCH      make a delta between two package archives
  tb delta apply OLD.zip PATCH OUT.zip       rebuild the new archive from the old one and a delta
  tb mods install NAME[@RANGE] [--registry URL] [--token T]
                                             install a mod (and its dependencies) from the registry
  tb mods list|remove NAME|update [NAME]     installed mods (MODS_DIR), removal, updates
  tb mods publish DIR [--registry URL] [--token T]
                                             pack a mod directory and upload it
  tb functions list|run M.f [--kwargs JSON]|test [--module M]
                                             the application core's registered functions
  tb mcp [--port 8765] [--host H] [--no-auth] [--stdio]
                                             the MCP transport: app-core functions as tools
  tb mcp keys create NAME [--permissions read,execute]|list|revoke NAME
                                             the MCP transport's API keys
  tb docs init|search Q|lookup NAME|suggest  the docs system
  tb footprint [--json]                      resource metrics of this process
  tb probe ping|geo [--json]                 reach a platform server and measure it
  tb rpc id|serve|call|relay|allow|deny|peers
                                             peer-to-peer RPC over libp2p (docs/rpc.md)
  tb worker http [--port N] [--worker-id ID] serve the application core's functions over HTTP (default port 8000)
  tb worker ws [--port N] [--data-dir DIR]   the WebSocket worker: /ws/{Module}/{handler} (default port 8100)
  tb workers start [--no-ui]|status [--json]|stop|cluster-join --host H [--port P]|cluster-leave --node H:P
                                             the worker manager: HTTP + WS workers, health, restarts, cluster (docs/workers.md)
  tb help                                    this text

Configuration comes from the environment (see .env.example and the README).`;

type Command = (argv: string[], io: CommandIo) => Promise<number>;

// Each command loads its own modules when it runs: a worker, `tb token` or `tb mcp keys` does not pay for loading
// the registry's or the other servers' code (about 1.5 s of CPU per process).
const COMMANDS: Record<string, Command> = {
  up: async (argv, io) => (await import('./cli/up.command.js')).runUpCommand(argv, io),
  registry: async (argv, io) => (await import('./cli/registry.command.js')).runRegistryCommand(argv, io),
  db: async (argv, io) => (await import('./cli/db.command.js')).runDbCommand(argv, io),
  gateway: async (argv, io) => (await import('./cli/gateway.command.js')).runGatewayCommand(argv, io),
  token: async (argv, io) => (await import('./cli/token.command.js')).runTokenCommand(argv, io),
  users: async (argv, io) => (await import('./cli/users.command.js')).runUsersCommand(argv, io),
  delta: async (argv, io) => (await import('./cli/delta.command.js')).runDeltaCommand(argv, io),
  mods: async (argv, io) => (await import('./cli/mods.command.js')).runModsCommand(argv, io),
  functions: async (argv, io) => (await import('./cli/functions.command.js')).runFunctionsCommand(argv, io),
  mcp: async (argv, io) => (await import('./cli/mcp.command.js')).runMcpCommand(argv, io),
  docs: async (argv, io) => (await import('./cli/docs.command.js')).runDocsCommand(argv, io),
  footprint: async (argv, io) => (await import('./cli/footprint.command.js')).runFootprintCommand(argv, io),
  probe: async (argv, io) => (await import('./cli/probe.command.js')).runProbeCommand(argv, io),
  rpc: async (argv, io) => (await import('./cli/rpc.command.js')).runRpcCommand(argv, io),
  worker: async (argv, io) => (await import('./cli/worker.command.js')).runWorkerCommand(argv, io),
  workers: async (argv, io) => (await import('./cli/workers.command.js')).runWorkersCommand(argv, io),
};

async function main(argv: string[], io: CommandIo): Promise<void> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    io.out(HELP);
    return;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`Unknown command "${name}". Run "tb help".`);
  const code = await command(rest, io);
  // -1: a server that keeps running.
  if (code >= 0) {
    process.exitCode = code;
    // A command forked by a supervisor (tb up) would otherwise stay alive on its IPC channel.
    process.channel?.unref();
  }
}

const io = processIo();
main(process.argv.slice(2), io).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError) {
    io.err(`tb: ${error.message}`);
    process.exitCode = 2;
    return;
  }
  io.err(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
