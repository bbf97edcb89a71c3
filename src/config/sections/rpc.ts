import { MiB, type EnvironmentReader } from './environment-reader.js';

/** Peer-to-peer RPC (`tb rpc`, docs/rpc.md). */
export interface RpcConfig {
  /** RPC_LISTEN (comma-separated multiaddrs): where `tb rpc serve` listens (default /ip4/0.0.0.0/tcp/9100). */
  listen: string[];
  /** RPC_RELAYS (comma-separated multiaddrs ending in /p2p/RELAY_ID): relays `tb rpc serve` reserves a slot on. */
  relays: string[];
  /** RPC_RELAY_LISTEN: where `tb rpc relay` listens (default /ip4/0.0.0.0/tcp/9101). */
  relayListen: string[];
  /** RPC_RELAY_ALLOW_PEERS (comma-separated peer ids): who may reserve a slot on `tb rpc relay`; empty: anyone. */
  relayAllowPeers: string[];
  /** RPC_CALL_TIMEOUT_SECONDS: the consumer's per-call timeout (30). */
  callTimeoutSeconds: number;
  /** RPC_PROVIDER_TIMEOUT_SECONDS: the provider answers 408 after this long (25). */
  providerTimeoutSeconds: number;
  /** RPC_MAX_MESSAGE_BYTES: largest request or response, both sides (4 MiB). */
  maxMessageBytes: number;
  /** RPC_MAX_CONCURRENT_CALLS: calls a provider runs at once (64). */
  maxConcurrentCalls: number;
  /** RPC_MAX_CONNECTIONS_PER_ADDRESS: inbound connections one address may have open at once (64). */
  maxConnectionsPerAddress: number;
  /** RPC_MAX_PENDING_CONNECTIONS: inbound connections in their upgrade at once, all addresses (128). */
  maxPendingConnections: number;
  /** RPC_MAX_PENDING_PER_ADDRESS: inbound connections one address may have in their upgrade at once (8). */
  maxPendingPerAddress: number;
  /** RPC_UPGRADE_TIMEOUT_SECONDS: an inbound connection not upgraded (Noise + yamux) by then is closed (5). */
  upgradeTimeoutSeconds: number;
  /** RPC_CONNECTIONS_PER_SECOND_PER_ADDRESS: new inbound connections per address and second (5). */
  connectionsPerSecond: number;
  /** RPC_ALLOWED_PEER_CONNECTIONS_PER_SECOND: the same for an address an allowed peer connected from (50). */
  allowedPeerConnectionsPerSecond: number;
}

export function readRpcSection(read: EnvironmentReader): RpcConfig {
  return {
    listen: read.string('RPC_LISTEN') === null ? ['/ip4/0.0.0.0/tcp/9100'] : read.list('RPC_LISTEN'),
    relays: read.list('RPC_RELAYS'),
    relayAllowPeers: read.list('RPC_RELAY_ALLOW_PEERS'),
    relayListen: read.string('RPC_RELAY_LISTEN') === null ? ['/ip4/0.0.0.0/tcp/9101'] : read.list('RPC_RELAY_LISTEN'),
    callTimeoutSeconds: read.number('RPC_CALL_TIMEOUT_SECONDS', 30, { min: 0.001 }),
    providerTimeoutSeconds: read.number('RPC_PROVIDER_TIMEOUT_SECONDS', 25, { min: 0.001 }),
    maxMessageBytes: read.integer('RPC_MAX_MESSAGE_BYTES', 4 * MiB, { min: 1024, max: 1024 * MiB }),
    maxConcurrentCalls: read.integer('RPC_MAX_CONCURRENT_CALLS', 64, { min: 1, max: 10_000 }),
    maxConnectionsPerAddress: read.integer('RPC_MAX_CONNECTIONS_PER_ADDRESS', 64, { min: 1, max: 100_000 }),
    maxPendingConnections: read.integer('RPC_MAX_PENDING_CONNECTIONS', 128, { min: 1, max: 100_000 }),
    maxPendingPerAddress: read.integer('RPC_MAX_PENDING_PER_ADDRESS', 8, { min: 1, max: 100_000 }),
    upgradeTimeoutSeconds: read.number('RPC_UPGRADE_TIMEOUT_SECONDS', 5, { min: 0.1 }),
    connectionsPerSecond: read.integer('RPC_CONNECTIONS_PER_SECOND_PER_ADDRESS', 5, { min: 1, max: 100_000 }),
    allowedPeerConnectionsPerSecond: read.integer('RPC_ALLOWED_PEER_CONNECTIONS_PER_SECOND', 50, {
      min: 1,
      max: 100_000,
    }),
  };
}
