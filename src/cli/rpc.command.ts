import { loadConfig, type PlatformConfig } from '../config/config.js';
import { withAppCore } from '../apps/app-core.app-module.js';
import { AppCoreService } from '../modules/app-core/index.js';
import { ModsLoaderService } from '../modules/mods/index.js';
import {
  ANY_PEER,
  AccessPolicyStore,
  NO_ANSWER,
  RpcPeerNode,
  loadOrCreatePeerKey,
  parseMultiaddrs,
  peerIdOf,
  peerKeyPath,
  policyPath,
  validatePeer,
  type RpcSettings,
} from '../modules/rpc/index.js';
import { UsageError } from '../common/errors.js';
import { parseCommandArgs } from './cli-args.js';
import { processIo, reportingDomainErrors, type CommandIo } from './command-io.js';

const USAGE = `usage: tb rpc id [--json]
       tb rpc serve [--listen MULTIADDR]... [--relay MULTIADDR]... [--json]
       tb rpc call PEER_ADDR module.function [--args JSON] [--kwargs JSON] [--timeout S] [--json]
       tb rpc relay [--listen MULTIADDR]... [--allow-peer PEER_ID]... [--json]
       tb rpc allow PEER_ID|* module.function|module.*|* [--level=-1|0|1|2]
       tb rpc deny PEER_ID|* [module.function|module.*|*]
       tb rpc peers [--json]`;

/** Exit status of `tb rpc call` when no answer came (unreachable, timed out, connection lost). */
export const EXIT_NO_ANSWER = 3;

/**
 * `tb rpc …`: peer-to-peer RPC over libp2p (docs/rpc.md). `serve` and `relay` run until SIGINT/SIGTERM;
 * `call` exits 0 on a result, 1 on an error answer, 3 when no answer came.
 */
export async function runRpcCommand(argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseCommandArgs(rest, {
    json: { type: 'boolean', default: false },
    listen: { type: 'string', multiple: true },
    relay: { type: 'string', multiple: true },
    'allow-peer': { type: 'string', multiple: true },
    args: { type: 'string' },
    kwargs: { type: 'string' },
    timeout: { type: 'string' },
    level: { type: 'string' },
    'data-dir': { type: 'string' },
  });
  const config = loadConfig(io.env, { dataDir: values['data-dir'] });
  const settings = rpcSettings(config);
  return reportingDomainErrors(io, async () => {
    switch (action) {
      case 'id':
        return await showId(config, values.json, io);
      case 'serve':
        return await serve(
          config,
          settings,
          values.listen ?? config.rpc.listen,
          values.relay ?? config.rpc.relays,
          values.json,
          io,
        );
      case 'relay':
        return await relay(
          config,
          settings,
          values.listen ?? config.rpc.relayListen,
          values['allow-peer'] ?? config.rpc.relayAllowPeers,
          values.json,
          io,
        );
      case 'call':
        return await call(config, settings, positionals, values, io);
      case 'allow':
      case 'deny':
      case 'peers':
        return await managePolicy(config, action, positionals, values.level, values.json, io);
      default:
        throw new UsageError(USAGE);
    }
  });
}

function rpcSettings(config: PlatformConfig): RpcSettings {
  return {
    callTimeoutMs: Math.round(config.rpc.callTimeoutSeconds * 1000),
    providerTimeoutMs: Math.round(config.rpc.providerTimeoutSeconds * 1000),
    maxMessageBytes: config.rpc.maxMessageBytes,
    maxConcurrentCalls: config.rpc.maxConcurrentCalls,
    maxConnectionsPerAddress: config.rpc.maxConnectionsPerAddress,
    maxPendingConnections: config.rpc.maxPendingConnections,
    maxPendingPerAddress: config.rpc.maxPendingPerAddress,
    upgradeTimeoutMs: Math.round(config.rpc.upgradeTimeoutSeconds * 1000),
    connectionsPerSecond: config.rpc.connectionsPerSecond,
    allowedPeerConnectionsPerSecond: config.rpc.allowedPeerConnectionsPerSecond,
  };
}

async function showId(config: PlatformConfig, json: boolean | undefined, io: CommandIo): Promise<number> {
  const peerId = peerIdOf(await loadOrCreatePeerKey(peerKeyPath(config.dataDir)));
  const addresses = config.rpc.listen.map((address) => `${address}/p2p/${peerId}`);
  io.out(
    json ? JSON.stringify({ peer_id: peerId, addresses }) : [peerId, ...addresses.map((a) => `  ${a}`)].join('\n'),
  );
  return 0;
}

function printPeer(role: string, peer: RpcPeerNode, json: boolean | undefined, io: CommandIo): void {
  io.out(
    json
      ? JSON.stringify({ role, peer_id: peer.peerId, addresses: peer.addresses() })
      : [`rpc ${role} ${peer.peerId} listening on`, ...peer.addresses().map((a) => `  ${a}`)].join('\n'),
  );
}

/** Resolves on the first SIGINT or SIGTERM. */
function shutdownSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Waits until the node holds a reservation on every relay (its relayed addresses appear), at most `ms`. */
async function awaitRelayAddresses(peer: RpcPeerNode, relays: readonly string[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const relayed = peer.addresses().filter((address) => address.includes('/p2p-circuit'));
    if (relayed.length >= relays.length) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

async function serve(
  config: PlatformConfig,
  settings: RpcSettings,
  listen: string[],
  relays: string[],
  json: boolean | undefined,
  io: CommandIo,
): Promise<number> {
  parseMultiaddrs([...listen, ...relays], 'address');
  return withAppCore(
    config,
    async (app) => {
      for (const failure of app.get(ModsLoaderService).report().failed)
        io.err(`warning: mod ${failure.name} not loaded: ${failure.error}`);
      const peer = await RpcPeerNode.start({
        ...settings,
        dataDir: config.dataDir,
        listen,
        relays,
        runner: app.get(AppCoreService),
        debug: config.debug,
        logger: { log: (message) => io.err(message), warn: (message) => io.err(`warning: ${message}`) },
      });
      const stopped = shutdownSignal();
      if (relays.length > 0 && !(await awaitRelayAddresses(peer, relays, 15_000)))
        io.err('warning: no reservation on the relay yet; relayed addresses appear once it is reachable');
      printPeer('provider', peer, json, io);
      await stopped;
      await peer.stop();
      return 0;
    },
    { logger: ['error'] },
  );
}

async function relay(
  config: PlatformConfig,
  settings: RpcSettings,
  listen: string[],
  reservationPeers: string[],
  json: boolean | undefined,
  io: CommandIo,
): Promise<number> {
  const peer = await RpcPeerNode.start({
    ...settings,
    dataDir: config.dataDir,
    listen,
    relayServer: true,
    relayReservationPeers: reservationPeers,
  });
  const stopped = shutdownSignal();
  printPeer('relay', peer, json, io);
  await stopped;
  await peer.stop();
  return 0;
}

async function call(
  config: PlatformConfig,
  settings: RpcSettings,
  positionals: string[],
  values: { args?: string; kwargs?: string; timeout?: string; json?: boolean },
  io: CommandIo,
): Promise<number> {
  const [address, name] = positionals;
  if (!address || !name || positionals.length > 2 || !/^[^.\s]+\.[^.\s]+$/.test(name)) throw new UsageError(USAGE);
  if (!address.startsWith('/') || !address.includes('/p2p/'))
    throw new UsageError('PEER_ADDR must be a multiaddr ending in /p2p/PEER_ID (see tb rpc id on the provider)');
  parseMultiaddrs([address], 'PEER_ADDR');
  const args = values.args === undefined ? undefined : parseJson(values.args, '--args');
  if (args !== undefined && !Array.isArray(args)) throw new UsageError('--args must be a JSON array');
  const kwargs = values.kwargs === undefined ? undefined : parseJson(values.kwargs, '--kwargs');
  if (kwargs !== undefined && (kwargs === null || typeof kwargs !== 'object' || Array.isArray(kwargs)))
    throw new UsageError('--kwargs must be a JSON object');
  const timeout = values.timeout === undefined ? undefined : Number(values.timeout);
  if (timeout !== undefined && !(timeout > 0))
    throw new UsageError(`--timeout must be a positive number of seconds (got "${values.timeout}")`);

  const peer = await RpcPeerNode.start({ ...settings, dataDir: config.dataDir });
  try {
    const result = await peer.call(address, name, {
      args: args as unknown[] | undefined,
      kwargs: kwargs as Record<string, unknown> | undefined,
      timeout,
    });
    io.out(JSON.stringify(result, null, values.json ? undefined : 2));
    if (!result.isError()) return 0;
    return result.result.data_info === NO_ANSWER ? EXIT_NO_ANSWER : 1;
  } finally {
    await peer.stop();
  }
}

async function managePolicy(
  config: PlatformConfig,
  action: 'allow' | 'deny' | 'peers',
  positionals: string[],
  levelText: string | undefined,
  json: boolean | undefined,
  io: CommandIo,
): Promise<number> {
  const store = new AccessPolicyStore(policyPath(config.dataDir));
  if (action === 'peers') {
    if (positionals.length > 0) throw new UsageError(USAGE);
    const document = await store.read();
    if (json) io.out(JSON.stringify(document));
    else {
      const rows = Object.entries(document.peers).map(
        ([peer, grant]) =>
          `${peer === ANY_PEER ? '* (any peer)' : peer}  level ${grant.level}  ${grant.allow.join(' ')}`,
      );
      io.out(
        rows.length === 0 ? 'no peer may call this provider (tb rpc allow PEER_ID module.function)' : rows.join('\n'),
      );
    }
    return 0;
  }
  const [peer, pattern] = positionals;
  if (!peer || positionals.length > 2 || (action === 'allow' && !pattern)) throw new UsageError(USAGE);
  if (action === 'allow') {
    const level = levelText === undefined ? undefined : Number(levelText);
    if (level !== undefined && ![-1, 0, 1, 2].includes(level))
      throw new UsageError(`--level must be -1, 0, 1 or 2 (got "${levelText}")`);
    const document = await store.allow(peer, pattern, level);
    const name = validatePeer(peer);
    io.out(`allowed ${pattern} to ${name === ANY_PEER ? 'every peer' : name} (level ${document.peers[name].level})`);
    return 0;
  }
  if (levelText !== undefined) throw new UsageError('--level applies to tb rpc allow only');
  const { changed } = await store.deny(peer, pattern);
  io.out(changed ? `denied ${pattern ?? 'everything'} to ${peer}` : `${peer} had no such grant; nothing changed`);
  return 0;
}

function parseJson(text: string, flag: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${flag} is not valid JSON: ${(error as Error).message}`);
  }
}
