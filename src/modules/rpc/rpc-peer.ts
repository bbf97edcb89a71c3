import type { Libp2p } from '@libp2p/interface';
import type { FunctionRunner } from '../app-core/function-runner.js';
import type { Result } from '../app-core/result.js';
import { AccessPolicyStore, policyPath } from './access-policy.js';
import { loadOrCreatePeerKey, peerKeyPath } from './identity.js';
import { RpcClient, type RpcCallOptions, type RpcClientStats, type RpcPeer } from './rpc-client.js';
import { DEFAULT_INBOUND_SETTINGS, createRpcNode } from './rpc-node.js';
import { RpcProvider, type RpcProviderLogger, type RpcProviderStats } from './rpc-provider.js';

/** Settings of a peer, as the `rpc` section of the platform configuration holds them. */
export interface RpcSettings {
  /** Per-call timeout of the consumer, in milliseconds (RPC_CALL_TIMEOUT_SECONDS, 30 s). */
  callTimeoutMs: number;
  /** Time the provider gives a call before answering 408, in milliseconds (RPC_PROVIDER_TIMEOUT_SECONDS, 25 s). */
  providerTimeoutMs: number;
  /** Largest message either side sends or reads (RPC_MAX_MESSAGE_BYTES, 4 MiB). */
  maxMessageBytes: number;
  /** Calls a provider runs at once (RPC_MAX_CONCURRENT_CALLS, 64). */
  maxConcurrentCalls: number;
  /** Inbound connections one address may have open at once (RPC_MAX_CONNECTIONS_PER_ADDRESS, 64). */
  maxConnectionsPerAddress: number;
  /** Inbound connections in their upgrade at once, over all addresses (RPC_MAX_PENDING_CONNECTIONS, 128). */
  maxPendingConnections: number;
  /** Inbound connections one address may have in their upgrade at once (RPC_MAX_PENDING_PER_ADDRESS, 8). */
  maxPendingPerAddress: number;
  /** Time an inbound connection has to finish its upgrade, in milliseconds (RPC_UPGRADE_TIMEOUT_SECONDS, 5 s). */
  upgradeTimeoutMs: number;
  /** New inbound connections per address and second (RPC_CONNECTIONS_PER_SECOND_PER_ADDRESS, 5). */
  connectionsPerSecond: number;
  /** The same for an address an allowed peer connected from (RPC_ALLOWED_PEER_CONNECTIONS_PER_SECOND, 50). */
  allowedPeerConnectionsPerSecond: number;
}

export const DEFAULT_RPC_SETTINGS: RpcSettings = {
  callTimeoutMs: 30_000,
  providerTimeoutMs: 25_000,
  maxMessageBytes: 4 * 1024 * 1024,
  maxConcurrentCalls: 64,
  maxConnectionsPerAddress: DEFAULT_INBOUND_SETTINGS.maxConnectionsPerAddress,
  maxPendingConnections: DEFAULT_INBOUND_SETTINGS.maxPendingConnections,
  maxPendingPerAddress: DEFAULT_INBOUND_SETTINGS.maxPendingPerAddress,
  upgradeTimeoutMs: DEFAULT_INBOUND_SETTINGS.upgradeTimeoutMs,
  connectionsPerSecond: DEFAULT_INBOUND_SETTINGS.connectionsPerSecond,
  allowedPeerConnectionsPerSecond: DEFAULT_INBOUND_SETTINGS.allowedPeerConnectionsPerSecond,
};

export interface StartRpcPeerOptions extends Partial<RpcSettings> {
  /** DATA_DIR: the identity (`rpc/peer.key`) and access policy (`rpc/policy.json`) live under it. */
  dataDir: string;
  listen?: readonly string[];
  relays?: readonly string[];
  /** Serve the application core to other peers (a provider); without it the peer only calls. */
  runner?: Pick<FunctionRunner, 'runAny'>;
  /** Run a Circuit Relay v2 server. */
  relayServer?: boolean;
  /** Peer ids the relay server accepts reservations from (default: any). */
  relayReservationPeers?: readonly string[];
  holePunching?: boolean;
  debug?: boolean;
  logger?: RpcProviderLogger;
}

/**
 * One RPC peer: its libp2p node with the persistent identity, the consumer (`call`) and, when given the
 * application core, the provider. The in-process API:
 *
 * ```ts
 * const peer = await RpcPeerNode.start({ dataDir });
 * const result = await peer.call('/ip4/10.0.0.2/tcp/9100/p2p/12D3KooW…', 'core.version', { timeout: 5 });
 * ```
 */
export class RpcPeerNode {
  private constructor(
    readonly node: Libp2p,
    readonly client: RpcClient,
    readonly provider: RpcProvider | undefined,
  ) {}

  static async start(options: StartRpcPeerOptions): Promise<RpcPeerNode> {
    const settings = { ...DEFAULT_RPC_SETTINGS, ...definedOnly(options) };
    const privateKey = await loadOrCreatePeerKey(peerKeyPath(options.dataDir));
    const policy = options.runner ? new AccessPolicyStore(policyPath(options.dataDir)) : undefined;
    const node = await createRpcNode({
      privateKey,
      listen: options.listen,
      relays: options.relays,
      relayServer: options.relayServer,
      relayReservationPeers: options.relayReservationPeers,
      holePunching: options.holePunching,
      inbound: {
        maxConnectionsPerAddress: settings.maxConnectionsPerAddress,
        maxPendingConnections: settings.maxPendingConnections,
        maxPendingPerAddress: settings.maxPendingPerAddress,
        upgradeTimeoutMs: settings.upgradeTimeoutMs,
        connectionsPerSecond: settings.connectionsPerSecond,
        allowedPeerConnectionsPerSecond: settings.allowedPeerConnectionsPerSecond,
      },
      // A peer named in the policy (not only reached by `*`) is one this provider serves.
      isAllowedPeer: policy ? async (peer) => (await policy.current()).peers[peer] !== undefined : undefined,
    });
    let provider: RpcProvider | undefined;
    try {
      if (options.runner && policy) {
        provider = new RpcProvider({
          runner: options.runner,
          policy,
          maxMessageBytes: settings.maxMessageBytes,
          maxConcurrentCalls: settings.maxConcurrentCalls,
          callTimeoutMs: settings.providerTimeoutMs,
          debug: options.debug ?? false,
          logger: options.logger,
        });
        await provider.attach(node);
      }
    } catch (error) {
      await node.stop();
      throw error;
    }
    const client = new RpcClient(node, {
      callTimeoutMs: settings.callTimeoutMs,
      maxMessageBytes: settings.maxMessageBytes,
    });
    return new RpcPeerNode(node, client, provider);
  }

  get peerId(): string {
    return this.node.peerId.toString();
  }

  /** Dialable addresses, each ending in `/p2p/PEER_ID` (relayed ones included once reserved). */
  addresses(): string[] {
    return this.node.getMultiaddrs().map((address) => address.toString());
  }

  /** Calls `module.function` on `peer`; every outcome is a Result (see RpcClient). */
  call(peer: RpcPeer, name: string, options?: RpcCallOptions): Promise<Result> {
    return this.client.call(peer, name, options);
  }

  stats(): { client: RpcClientStats; provider: RpcProviderStats | undefined } {
    return { client: this.client.stats(), provider: this.provider?.stats() };
  }

  async stop(): Promise<void> {
    await this.client.close();
    await this.node.stop();
  }
}

function definedOnly(options: Partial<RpcSettings>): Partial<RpcSettings> {
  const result: Partial<RpcSettings> = {};
  for (const key of Object.keys(DEFAULT_RPC_SETTINGS) as Array<keyof RpcSettings>) {
    if (options[key] !== undefined) result[key] = options[key];
  }
  return result;
}
