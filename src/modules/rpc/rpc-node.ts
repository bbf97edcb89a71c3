import './node-compat.js';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { circuitRelayServer, circuitRelayTransport } from '@libp2p/circuit-relay-v2';
import { dcutr } from '@libp2p/dcutr';
import { identify } from '@libp2p/identify';
import { FaultTolerance, type Libp2p, type PrivateKey } from '@libp2p/interface';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { webSockets } from '@libp2p/websockets';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { createLibp2p } from 'libp2p';
import { PlatformError } from '../../common/errors.js';

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
  const node = await createLibp2p({
    privateKey: options.privateKey,
    connectionGater:
      reservationPeers.size === 0
        ? undefined
        : { denyInboundRelayReservation: (source) => !reservationPeers.has(source.toString()) },
    addresses: { listen: [...listen, ...relays.map((relay) => `${relay}/p2p-circuit`)] },
    transports: [tcp(), webSockets(), circuitRelayTransport()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: { maxConnections: 1024 },
    // A relay that refuses or cannot be reached leaves the peer running on its other addresses.
    transportManager: { faultTolerance: FaultTolerance.NO_FATAL },
    services,
  });
  return node as unknown as Libp2p;
}
