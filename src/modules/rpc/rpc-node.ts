import './node-compat.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import { identify } from '@libp2p/identify';
import {
  FaultTolerance,
  type ConnectionGater,
  type Libp2p,
  type MultiaddrConnection,
  type PeerId,
  type PrivateKey,
} from '@libp2p/interface';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { PlatformError } from '../../common/errors.js';
import { InboundAdmission, type InboundLimits } from './inbound-admission.js';

/** How a listening node treats inbound connections before and during their upgrade. */
export interface RpcInboundSettings extends InboundLimits {
  /** Connections in their upgrade at once over all addresses (libp2p's maxIncomingPendingConnections). */
  maxPendingConnections: number;
  /** An inbound connection not encrypted and multiplexed within this time is closed, in milliseconds. */
  upgradeTimeoutMs: number;
}

/**
 * Server defaults. libp2p's own (10 pending connections in all, 10 s to upgrade, 5 connections per
 * second per address) let one address that opens a dozen connections and stalls each after a few bytes
 * lock every other peer out, and refuse a consumer that starts more than five calls in one second; and
 * with no limit per address, one address could fill all 1024 connections in a few minutes. A Noise
 * handshake takes a few round trips, so 5 s is ample even through a relay.
 */
export const DEFAULT_INBOUND_SETTINGS: RpcInboundSettings = {
  maxConnectionsPerAddress: 64,
  maxPendingConnections: 128,
  maxPendingPerAddress: 8,
  upgradeTimeoutMs: 5_000,
  connectionsPerSecond: 5,
  allowedPeerConnectionsPerSecond: 50,
  allowedAddressTtlMs: 10 * 60_000,
};

export interface RpcNodeOptions {
  privateKey: PrivateKey;
  /** Multiaddrs to listen on (`/ip4/0.0.0.0/tcp/9100`, `/ip4/0.0.0.0/tcp/9102/ws`); none for a dial-only consumer. */
  listen?: readonly string[];
  /** Circuit relays to reserve a slot on, so peers that cannot reach this one directly reach it through them. */
  relays?: readonly string[];
  /** Run a Circuit Relay v2 server (`tb rpc relay`). */
  relayServer?: boolean;
  /**
   * Peer ids a relay server accepts reservations from (the providers it relays for); empty or absent:
   * any peer. Consumers need no entry: they only connect through to a reserved peer.
   */
  relayReservationPeers?: readonly string[];
  /** Try DCUtR hole punching to upgrade relayed connections to direct ones (default true; relays never do). */
  holePunching?: boolean;
  /** Limits on inbound connections (DEFAULT_INBOUND_SETTINGS where absent). */
  inbound?: Partial<RpcInboundSettings>;
  /**
   * Whether a peer id is one this node serves by name (a provider's access policy); the address it
   * completes a handshake from gets the allowed peers' connection rate. Absent: no peer is.
   */
  isAllowedPeer?: (peerId: string) => boolean | Promise<boolean>;
}

/** Validates multiaddrs given by an operator; a typo is a usage error, not a crash inside libp2p. */
export function parseMultiaddrs(values: readonly string[], what: string): string[] {
  return values.map((value) => {
    try {
      return multiaddr(value).toString();
    } catch (error) {
      throw new PlatformError('BAD_REQUEST', `${what} "${value}" is not a multiaddr: ${(error as Error).message}`);
    }
  });
}

/**
 * A libp2p node for RPC: TCP and WebSocket transports, Noise (X25519 + ChaCha20-Poly1305, end to end
 * between the two peers, also through a relay), yamux, identify, ping, the Circuit Relay v2 transport and
 * DCUtR. Relay servers do not limit the relayed connections of their peers (duration and data) so long
 * RPC sessions survive; a relay only ever carries the peers' Noise ciphertext.
 */
export async function createRpcNode(options: RpcNodeOptions): Promise<Libp2p> {
  const listen = parseMultiaddrs(options.listen ?? [], 'listen address');
  const relays = parseMultiaddrs(options.relays ?? [], 'relay address');
  const services: Record<string, (components: any) => unknown> = { identify: identify(), ping: ping() };
  if (options.relayServer) {
    services.relay = circuitRelayServer({
      reservations: { maxReservations: 1024, applyDefaultLimit: false },
      maxInboundHopStreams: 1024,
      maxOutboundStopStreams: 1024,
    });
  } else if (options.holePunching !== false) {
    services.dcutr = dcutr();
  }
  const reservationPeers = new Set(
    (options.relayReservationPeers ?? []).map((peer) => {
      try {
        return peerIdFromString(peer).toString();
      } catch {
        throw new PlatformError('BAD_REQUEST', `"${peer}" is not a peer id (12D3KooW…)`);
      }
    }),
  );
  const inbound = { ...DEFAULT_INBOUND_SETTINGS, ...definedOnly(options.inbound ?? {}) };
  // A relay's allowed peers are the providers it holds reservations for.
  const isAllowedPeer =
    options.isAllowedPeer ?? (reservationPeers.size > 0 ? (peer: string) => reservationPeers.has(peer) : undefined);
  const connectionGater: ConnectionGater = inboundGater(new InboundAdmission(inbound), isAllowedPeer);
  if (reservationPeers.size > 0)
    connectionGater.denyInboundRelayReservation = (source) => !reservationPeers.has(source.toString());
  const node = await createLibp2p({
    privateKey: options.privateKey,
    connectionGater,
    addresses: { listen: [...listen, ...relays.map((relay) => `${relay}/p2p-circuit`)] },
    transports: [tcp(), webSockets(), circuitRelayTransport()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      maxConnections: 1024,
      maxIncomingPendingConnections: inbound.maxPendingConnections,
      inboundUpgradeTimeout: inbound.upgradeTimeoutMs,
      // libp2p counts this per address for everyone; the gater applies the lower rate to addresses no
      // allowed peer has connected from.
      inboundConnectionThreshold: Math.max(inbound.connectionsPerSecond, inbound.allowedPeerConnectionsPerSecond),
    },
    // A relay that refuses or cannot be reached leaves the peer running on its other addresses.
    transportManager: { faultTolerance: FaultTolerance.NO_FATAL },
    services,
  });
  return node as unknown as Libp2p;
}

/** The IP address of a direct inbound connection; none for a relayed one (the relay limits those). */
function remoteHost(address: Multiaddr): string | undefined {
  const components = address.getComponents();
  if (components.some((component) => component.name === 'p2p-circuit')) return undefined;
  const first = components[0];
  return first && (first.name === 'ip4' || first.name === 'ip6') ? first.value : undefined;
}

/**
 * The connection gater of every RPC node: admits a direct inbound connection by its remote address
 * (InboundAdmission) before the upgrade starts, releases the address's pending slot when the upgrade
 * finishes and its connection slot when the connection closes, and vouches for the address once an allowed peer has proven its identity from it.
 */
function inboundGater(admission: InboundAdmission, isAllowedPeer: RpcNodeOptions['isAllowedPeer']): ConnectionGater {
  const admitted = new WeakMap<MultiaddrConnection, { key: string; pending: boolean }>();
  return {
    denyInboundConnection: (connection) => {
      const host = remoteHost(connection.remoteAddr);
      if (host === undefined) return false;
      const decision = admission.admit(host);
      if (!decision.admitted) return true;
      const entry = { key: decision.key, pending: true };
      admitted.set(connection, entry);
      // Fires for a refused, failed or timed-out upgrade as for an upgraded connection closing later.
      connection.addEventListener('close', () => admission.closed(entry.key, entry.pending), { once: true });
      return false;
    },
    denyInboundEncryptedConnection: async (peerId: PeerId, connection) => {
      const host = remoteHost(connection.remoteAddr);
      if (host !== undefined && isAllowedPeer && (await isAllowedPeer(peerId.toString()))) admission.vouch(host);
      return false;
    },
    denyInboundUpgradedConnection: (_peerId, connection) => {
      const entry = admitted.get(connection);
      if (entry?.pending) {
        entry.pending = false;
        admission.upgraded(entry.key);
      }
      return false;
    },
  };
}

function definedOnly<T extends object>(values: Partial<T>): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>;
}
